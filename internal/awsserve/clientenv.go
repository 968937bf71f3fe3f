package awsserve

import (
	"fmt"
	"io"
	"strings"
)

// EnvVar is one environment variable of a client's configuration.
type EnvVar struct{ Name, Value string }

// ClientEnv is the environment that points the AWS CLI, boto3 and
// aws-sdk-go-v2 at a server on url (aws-apis.md §1.8): each service's
// AWS_ENDPOINT_URL_<SERVICE> (one server answers all four), the region —
// AWS_DEFAULT_REGION too, which AWS CLI v1 reads instead of AWS_REGION —
// the server's dummy credentials, and no instance metadata lookups.
func ClientEnv(url, region, accessKeyID, secretAccessKey string) []EnvVar {
	return []EnvVar{
		{"AWS_ENDPOINT_URL_EKS", url},
		{"AWS_ENDPOINT_URL_SSM", url},
		{"AWS_ENDPOINT_URL_AUTO_SCALING", url},
		{"AWS_ENDPOINT_URL_EC2", url},
		{"AWS_REGION", region},
		{"AWS_DEFAULT_REGION", region},
		{"AWS_ACCESS_KEY_ID", accessKeyID},
		{"AWS_SECRET_ACCESS_KEY", secretAccessKey},
		{"AWS_EC2_METADATA_DISABLED", "true"},
	}
}

// WriteExports writes env as POSIX shell exports, one a line, for
// `eval "$(...)"`: a value is single-quoted unless every byte of it is
// one a shell reads literally.
func WriteExports(w io.Writer, env []EnvVar) error {
	for _, v := range env {
		if _, err := fmt.Fprintf(w, "export %s=%s\n", v.Name, shellQuote(v.Value)); err != nil {
			return err
		}
	}
	return nil
}

// shellQuote quotes s for a POSIX shell: as is when it is made of
// letters, digits and -_./:=@%+, (a URL, a region, a path without
// spaces), else in single quotes, a quote inside closing them, escaped
// and reopening them.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
