// Error of a result against the fp64 oracle, in the norms every zyfa accuracy figure uses: the tests, the
// bench and the zyfa command all measure with this one definition.
#ifndef ZYFA_REF_ERROR_NORMS_HPP_
#define ZYFA_REF_ERROR_NORMS_HPP_

#include <cstdint>
#include <string>
#include <vector>

namespace zyfa::ref {

struct ErrorStats {
  double rel_rms = 0;    // sqrt(sum (a - e)^2 / sum e^2); infinite if any value is not finite
  double max_abs = 0;    // max |a - e| over the finite values; infinite if any value is not finite
  int64_t count = 0;
  int64_t nonfinite = 0; // values where `actual` or `expected` is NaN or infinite (the reference: a broken oracle)
  std::string describe() const;
};

// `actual` and `expected` in the same order and of the same size (else count = -1 and errors infinite).
// `weights`, if given (one per value), weigh each value's square in both sums of rel_rms: a sample of rows
// weighted by the rows each stands for estimates the whole tensor's rel_rms (bench/sampled_reference.hpp).
ErrorStats compare_to_reference(const std::vector<double> &actual, const std::vector<double> &expected,
                                const std::vector<double> &weights = {});

}  // namespace zyfa::ref

#endif  // ZYFA_REF_ERROR_NORMS_HPP_
