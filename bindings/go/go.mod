// The Go binding of libzyfa. No dependencies, so it builds with GOPROXY=off; consume it with a replace
// directive pointing at this folder.
module zyfa

go 1.19
