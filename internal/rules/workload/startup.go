package workload

import (
	"fmt"
	"time"
)

// StartupAnnotation on a pod template overrides the time from binding to
// Ready, e.g. "45s" for a slow JVM.
const StartupAnnotation = "twin.ladder.dev/startup"

// ValidateStartupAnnotation checks a pod template's startup annotation.
func ValidateStartupAnnotation(annotations map[string]string) error {
	v, ok := annotations[StartupAnnotation]
	if !ok {
		return nil
	}
	if d, err := time.ParseDuration(v); err != nil || d < 0 {
		return fmt.Errorf("annotation %s: %q is not a duration such as 45s", StartupAnnotation, v)
	}
	return nil
}
