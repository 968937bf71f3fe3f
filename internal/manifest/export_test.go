package manifest

// For the external tests (package manifest_test), which go through
// stricttest, a package that imports this one.
var Modelled = modelled

func SplitBodies(data []byte) [][]byte {
	var out [][]byte
	for _, d := range splitStream(data, false) {
		out = append(out, d.Body)
	}
	return out
}
