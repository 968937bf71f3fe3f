package twinaws

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"strconv"
)

// Pagination as the APIs do it (aws-apis.md §2.13): at most maxResults
// items, then an opaque nextToken, absent on the last page. The twin's
// token is the offset of the next item, encoded; a token the twin did not
// issue is refused as the service refuses it.

// page returns the page of items a request asks for, the next page's token
// (nil on the last page), and ok false when the token is not one the twin
// issued or maxResults is out of [1, limit].
func page[T any](items []T, maxResults *int32, nextToken *string, limit int) (out []T, next *string, err error) {
	size := limit
	if maxResults != nil {
		if *maxResults < 1 || int(*maxResults) > limit {
			return nil, nil, fmt.Errorf("maxResults must be between 1 and %d, got %d", limit, *maxResults)
		}
		size = int(*maxResults)
	}
	start := 0
	if nextToken != nil && *nextToken != "" {
		b, decodeErr := base64.RawURLEncoding.DecodeString(*nextToken)
		n, atoiErr := strconv.Atoi(string(b))
		if decodeErr != nil || atoiErr != nil || n < 0 || n > len(items) {
			return nil, nil, fmt.Errorf("the nextToken %q is not valid", *nextToken)
		}
		start = n
	}
	end := min(start+size, len(items))
	if end < len(items) {
		t := base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end)))
		next = &t
	}
	return items[start:end], next, nil
}

// uuid is a stable UUID-shaped id derived from parts, so that the twin's
// ids are the same on every run.
func uuid(parts ...any) string {
	h := fnv.New128a()
	fmt.Fprint(h, parts...)
	b := h.Sum(nil)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func ptr[T any](v T) *T { return &v }
