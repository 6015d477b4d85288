// The extractor of upstream facts kept only in Go code (see main.go); standard library only.
module kruise-ha/tools/upstream/extract

go 1.22
