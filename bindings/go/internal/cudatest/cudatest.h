/* The CUDA driver calls of the Go binding's device tests, looked up in libcuda.so.1 at run time. Each
 * returns 0 or a CUDA error; zyfa_cudatest_error() says which call failed and why. */
#ifndef ZYFA_GO_CUDATEST_H_
#define ZYFA_GO_CUDATEST_H_

#include <stddef.h>
#include <stdint.h>

int zyfa_cudatest_open(void);
const char *zyfa_cudatest_error(void);
int zyfa_cudatest_alloc(uint64_t *ptr, size_t bytes);
int zyfa_cudatest_free(uint64_t ptr);
int zyfa_cudatest_upload(uint64_t dst, const void *src, size_t bytes);
int zyfa_cudatest_download(void *dst, uint64_t src, size_t bytes);
int zyfa_cudatest_synchronize(void);

#endif /* ZYFA_GO_CUDATEST_H_ */
