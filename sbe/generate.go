package sbe

// The generated packages are committed; `go generate ./sbe/...` (or
// `make generate`) rebuilds them from the schemas, and TestGeneratedIsCurrent
// fails when a committed file differs from what the generator writes.

//go:generate go run ./cmd/sbegen -schema ../schemas/venue.xml -out venue
//go:generate go run ./cmd/sbegen -schema ../schemas/marketdata.xml -out marketdata
//go:generate go run ./cmd/sbegen -schema testdata/example.xml -out internal/example
