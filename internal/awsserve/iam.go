package awsserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// Policy is the part of an IAM identity-based policy the endpoints
// evaluate, so that the lab can refuse what a least-privilege role would:
// each statement's Effect and Action. IAM's order holds — an explicit Deny
// wins, then any Allow, else the request is implicitly denied — and action
// names match as IAM matches them: case-insensitively, with * and ?
// wildcards (`eks:Describe*`) — IAM User Guide, "IAM JSON policy elements:
// Action" and "Policy evaluation logic". Resources and Conditions are not evaluated:
// the lab serves one cluster in one account, so a policy that scopes by ARN
// is read as if its Resource were "*".
type Policy struct {
	statements []policyStatement
}

type policyStatement struct {
	allow   bool
	actions []string // lower case
}

// ParsePolicy reads an IAM policy document (Version 2012-10-17). It refuses
// what it could not evaluate faithfully — NotAction, a principal — rather
// than allow more than IAM would.
func ParsePolicy(data []byte) (*Policy, error) {
	var doc struct {
		Version   string
		Statement json.RawMessage
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not an IAM policy document: %v", err)
	}
	if doc.Version != "2012-10-17" {
		return nil, fmt.Errorf("Version %q: an IAM policy document says \"2012-10-17\"", doc.Version)
	}
	// Statement is one object or a list of them.
	var raw []json.RawMessage
	if err := json.Unmarshal(doc.Statement, &raw); err != nil {
		raw = []json.RawMessage{doc.Statement}
	}
	p := &Policy{}
	for i, r := range raw {
		var s map[string]json.RawMessage
		if err := json.Unmarshal(r, &s); err != nil {
			return nil, fmt.Errorf("Statement[%d]: not an object", i)
		}
		for key := range s {
			switch key {
			case "Sid", "Effect", "Action", "Resource", "Condition":
			default:
				return nil, fmt.Errorf("Statement[%d].%s: not evaluated by the lab's endpoints; write the policy with Effect, Action and Resource", i, key)
			}
		}
		var effect string
		if err := json.Unmarshal(s["Effect"], &effect); err != nil || (effect != "Allow" && effect != "Deny") {
			return nil, fmt.Errorf("Statement[%d].Effect: %s, want \"Allow\" or \"Deny\"", i, s["Effect"])
		}
		actions, err := stringOrList(s["Action"])
		if err != nil || len(actions) == 0 {
			return nil, fmt.Errorf("Statement[%d].Action: want an action such as \"eks:DescribeCluster\" or a list of them", i)
		}
		st := policyStatement{allow: effect == "Allow"}
		for _, a := range actions {
			if service, op, ok := strings.Cut(a, ":"); (!ok || service == "" || op == "") && a != "*" {
				return nil, fmt.Errorf("Statement[%d].Action %q: want SERVICE:OPERATION, e.g. eks:DescribeCluster", i, a)
			}
			st.actions = append(st.actions, strings.ToLower(a))
		}
		p.statements = append(p.statements, st)
	}
	return p, nil
}

func stringOrList(raw json.RawMessage) ([]string, error) {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	var list []string
	err := json.Unmarshal(raw, &list)
	return list, err
}

// Allows reports whether the policy lets the caller perform action
// ("eks:UpdateClusterVersion").
func (p *Policy) Allows(action string) bool {
	action = strings.ToLower(action)
	allowed := false
	for _, s := range p.statements {
		for _, pattern := range s.actions {
			// path.Match's * and ? are IAM's wildcards; an action holds no
			// slash, so * never stops early.
			if ok, _ := path.Match(pattern, action); !ok {
				continue
			}
			if !s.allow {
				return false
			}
			allowed = true
		}
	}
	return allowed
}

// An Operator names the operation a request calls, as IAM names the
// action after its service prefix: DescribeCluster, StartInstanceRefresh.
type Operator interface {
	Operation(r *http.Request, body []byte) string
}

// Operation implements Operator: the operation whose route the request
// takes.
func (m *restJSONMux) Operation(r *http.Request, _ []byte) string {
	_, pattern := m.mux.Handler(r)
	return m.ops[pattern]
}

// Operation implements Operator: the query's Action.
func (s *queryService) Operation(_ *http.Request, body []byte) string {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return ""
	}
	return form.Get("Action")
}

// Operation implements Operator: X-Amz-Target's operation.
func (m *awsJSONMux) Operation(r *http.Request, _ []byte) string {
	_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	return op
}

// LabPrincipal is the identity the endpoints name when they refuse an
// action: the lab account's user.
const LabPrincipal = "arn:aws:iam::111122223333:user/ladder-lab"

// accessDenied is how each service refuses an action its caller's policy
// does not allow (aws-apis.md's error tables): EKS and SSM's
// AccessDeniedException (403 for EKS's restJson1, 400 for awsJson), EC2's
// UnauthorizedOperation and Auto Scaling's AccessDenied (403), each
// message naming the principal and the action as IAM does.
func accessDenied(service, action string) (status int, code, message string) {
	message = fmt.Sprintf("User: %s is not authorized to perform: %s because no identity-based policy allows the %s action", LabPrincipal, action, action)
	switch service {
	case ServiceEC2:
		return http.StatusForbidden, "UnauthorizedOperation", "You are not authorized to perform this operation. " + message
	case ServiceAutoScaling:
		return http.StatusForbidden, "AccessDenied", message
	case ServiceSSM:
		return http.StatusBadRequest, "AccessDeniedException", message
	default:
		return http.StatusForbidden, "AccessDeniedException", message
	}
}
