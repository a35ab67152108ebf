module gov.example/replay

go 1.19

require gov.dev/gov v0.0.0

// The package in this repository (an installed gov: PREFIX/share/gov/go/gov).
replace gov.dev/gov => ../../go/gov
