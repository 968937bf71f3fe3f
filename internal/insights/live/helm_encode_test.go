package live

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
)

// EncodeRelease is DecodeRelease's inverse, as Helm writes the value: JSON,
// gzip, base64: the tests craft release secrets with it.
func EncodeRelease(r any) ([]byte, error) {
	js, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(js); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return []byte(base64.StdEncoding.EncodeToString(b.Bytes())), nil
}
