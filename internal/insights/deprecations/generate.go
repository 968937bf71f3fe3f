package deprecations

//go:generate go run ./gen -o apis_generated.csv
