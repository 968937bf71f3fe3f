// Package catalog holds Ladder's embedded, dated reference data: EC2 instance
// types with EKS node resources and prices, EKS-optimized AMIs, the EKS
// Kubernetes version calendar, and the latest known EKS add-on versions.
//
// The data is a snapshot, not the truth. It is as of [DataDate] and comes from
// public sources: the AWS EKS user guide and endoflife.date (calendar and
// add-ons, see eks-calendar.csv and addons.csv), karpenter-provider-aws v1.14.1
// (ENI limits, on-demand prices and the node-overhead formulas), and the
// Karpenter node-upgrade seed (the two real AMI ids). Spot prices are dated
// estimates, and every AMI id other than the seed's is a stable synthetic
// placeholder. When a cluster or AWS account is reachable, prefer the live
// APIs: DescribeClusterVersions, DescribeAddonVersions, the SSM public AMI
// parameters and the EC2 pricing APIs.
//
// Every CSV file is embedded with go:embed and parsed once, on first use. The
// embedded files are checked by the package's tests, so a malformed row fails
// the build's tests rather than a user's run; should one slip through anyway,
// the first accessor panics with the file name and line.
package catalog

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DataDate is the date of the newest facts in the embedded data (YYYY-MM-DD).
const DataDate = "2026-11-25"

// Describe returns a one-line summary of the embedded data, suitable for
// `ladder version`, for example
// "embedded data as of 2026-11-25: 54 instance types, 598 AMIs, EKS calendar 1.23-1.36, add-on versions for 4 add-ons".
func Describe() string {
	rels := Releases()
	calendar := "empty"
	if len(rels) > 0 {
		calendar = rels[0].Minor + "-" + rels[len(rels)-1].Minor
	}
	addons := map[string]bool{}
	for _, a := range AddonVersions() {
		addons[a.Addon] = true
	}
	return fmt.Sprintf("embedded data as of %s: %d instance types, %d AMIs, EKS calendar %s, add-on versions for %d add-ons",
		DataDate, len(InstanceTypes()), len(AMIs()), calendar, len(addons))
}

// csvRecord is one data row of an embedded CSV file, with its line number for
// error messages and its fields addressable by header name.
type csvRecord struct {
	file   string
	line   int
	fields map[string]string
}

// readCSV parses an embedded CSV file. Lines starting with '#' are comments.
// The first non-comment row must be exactly the wanted header; every row must
// have as many fields as the header.
func readCSV(file string, data []byte, header []string) ([]csvRecord, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.Comment = '#'
	r.FieldsPerRecord = len(header)
	got, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: reading header: %w", file, err)
	}
	if !slices.Equal(got, header) {
		return nil, fmt.Errorf("%s: header is %q, want %q", file, got, header)
	}
	var out []csvRecord
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		line, _ := r.FieldPos(0)
		rec := csvRecord{file: file, line: line, fields: make(map[string]string, len(header))}
		for i, h := range header {
			rec.fields[h] = strings.TrimSpace(row[i])
		}
		out = append(out, rec)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no data rows", file)
	}
	return out, nil
}

func (r csvRecord) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", r.file, r.line, fmt.Sprintf(format, args...))
}

// str returns a required, non-empty field.
func (r csvRecord) str(name string) (string, error) {
	v := r.fields[name]
	if v == "" {
		return "", r.errorf("%s is empty", name)
	}
	return v, nil
}

func (r csvRecord) integer(name string) (int64, error) {
	v, err := r.str(name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, r.errorf("%s %q is not an integer", name, v)
	}
	return n, nil
}

func (r csvRecord) float(name string) (float64, error) {
	v, err := r.str(name)
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, r.errorf("%s %q is not a number", name, v)
	}
	return f, nil
}

func (r csvRecord) date(name string) (time.Time, error) {
	v, err := r.str(name)
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, r.errorf("%s %q is not a YYYY-MM-DD date", name, v)
	}
	return t, nil
}

// isMinor reports whether s is a Kubernetes minor as EKS spells it: "1.30".
func isMinor(s string) bool {
	major, minor, ok := strings.Cut(s, ".")
	if !ok || major != "1" || minor == "" || (len(minor) > 1 && minor[0] == '0') {
		return false
	}
	for _, c := range minor {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// NormalizeMinor turns "v1.30", "1.30" or "1.30.14" (with an optional
// "-eks-..." build suffix) into the minor "1.30". It reports false when the
// input is not a Kubernetes 1.x version.
func NormalizeMinor(version string) (string, bool) {
	v := strings.TrimPrefix(strings.TrimSpace(version), "v")
	v, _, _ = strings.Cut(v, "-")
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return "", false
	}
	m := parts[0] + "." + parts[1]
	if !isMinor(m) {
		return "", false
	}
	if len(parts) == 3 {
		if _, err := strconv.ParseUint(parts[2], 10, 32); err != nil {
			return "", false
		}
	}
	return m, true
}

// minorNumber returns 30 for "1.30"; callers pass validated minors.
func minorNumber(minor string) int {
	_, m, _ := strings.Cut(minor, ".")
	n, _ := strconv.Atoi(m)
	return n
}

// compareMinors orders "1.9" before "1.30".
func compareMinors(a, b string) int {
	return minorNumber(a) - minorNumber(b)
}
