package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ladder-eks/ladder/internal/insights"
)

var (
	userRE     = regexp.MustCompile(`User "([^"]*)"`)
	verbRE     = regexp.MustCompile(`cannot (\w+) resource`)
	resourceRE = regexp.MustCompile(`cannot \w+ resource "([^"]+)"`)
)

// serverError words an error of the API server as one line that names the
// server and what to do.
func serverError(host, doing string, err error) error {
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the API server at %s refused the credentials (401 Unauthorized) while %s: refresh them (for EKS: aws eks update-kubeconfig --name CLUSTER, with the AWS profile that has access) or pick another --context", host, doing)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s on the API server at %s: forbidden%s: grant the verb on that resource, or use a context with more rights",
			doing, host, userOf(err))
	case errors.Is(err, context.DeadlineExceeded) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err):
		return fmt.Errorf("the API server at %s did not answer in time while %s: %v (is it overloaded or behind a slow VPN? retry)", host, doing, err)
	case isTransport(err):
		return fmt.Errorf("cannot reach the API server at %s: %v (is the cluster up and its address right? check --kubeconfig and --context; for EKS: aws eks update-kubeconfig --name CLUSTER, and the endpoint's public or private access)", host, transportCause(err))
	}
	return fmt.Errorf("%s on the API server at %s: %v", doing, host, err)
}

// isTransport reports whether the request never got an HTTP answer.
func isTransport(err error) bool {
	if err == nil {
		return false
	}
	var uerr *url.Error
	var nerr net.Error
	return errors.As(err, &uerr) || errors.As(err, &nerr)
}

// transportCause is the innermost useful part of a transport error
// ("dial tcp 10.0.0.1:443: connect: connection refused").
func transportCause(err error) string {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err.Error()
	}
	return err.Error()
}

func userOf(err error) string {
	if m := userRE.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Sprintf(" for user %q", m[1])
	}
	return ""
}

// verbOf is the verb a 403 names ("cannot get resource ..."), else def.
func verbOf(err error, def string) string {
	if m := verbRE.FindStringSubmatch(err.Error()); m != nil {
		return m[1]
	}
	return def
}

// resourceOf is the resource a 403 names, else def.
func resourceOf(err error, def string) string {
	if m := resourceRE.FindStringSubmatch(err.Error()); m != nil {
		return m[1]
	}
	return def
}

// forbiddenError fails a read for the kinds the checks need that the user
// may not list.
func forbiddenError(resources []string) error {
	what := resources[0]
	if len(resources) > 1 {
		what = "them"
	}
	return fmt.Errorf("cannot list %s at cluster scope: grant list on %s in every namespace (a ClusterRole bound with a ClusterRoleBinding; check with: kubectl auth can-i list %s --all-namespaces)",
		strings.Join(resources, ", "), what, resources[0])
}

// forbiddenProblem is a WARNING for an optional source the user may not
// read (one problem for all the kinds of one source): the read goes on
// without it.
func forbiddenProblem(verb string, resources []string, consequence string, err error) insights.Problem {
	all := strings.Join(resources, ", ")
	origin, them := "live:"+resources[0], resources[0]
	if len(resources) > 1 {
		origin, them = fmt.Sprintf("live:%s and %d other kinds", resources[0], len(resources)-1), "them"
	}
	msg := fmt.Sprintf("cannot %s %s at cluster scope%s; %s", verb, all, userOf(err), consequence)
	fix := fmt.Sprintf("grant %s on %s to check them too (check with: kubectl auth can-i %s %s --all-namespaces)", verb, them, verb, resources[0])
	if !apierrors.IsForbidden(err) {
		msg = fmt.Sprintf("cannot %s %s: %v; %s", verb, all, err, consequence)
		fix = "check that the API server serves them (kubectl api-resources)"
	}
	return insights.Problem{Source: insights.Source{Origin: origin}, Severity: insights.Warning, Message: msg, Fix: fix}
}
