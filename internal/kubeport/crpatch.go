package kubeport

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// PatchCustomResource applies a patch to a custom resource as the API
// server's patcher does, for an implementation that stores objects itself:
// it marshals obj, applies data as a JSON merge patch or a JSON patch, and
// decodes the result into out. The errors are the API server's: 415 for a
// patch type a custom resource does not take (strategic merge: CRDs declare
// no patch strategy), 400 for a patch that does not parse or apply or
// that changes the object's name.
func PatchCustomResource(name string, pt types.PatchType, data []byte, obj, out metav1.Object) error {
	if pt == types.StrategicMergePatchType {
		return unsupportedPatch(false)
	}
	return PatchObject(name, pt, data, obj, out)
}

// PatchObject applies a patch to an object as the API server's patcher
// does, for an implementation that stores objects itself: it marshals obj,
// applies data — a JSON merge patch, a JSON patch, or a strategic merge
// patch by out's type's patch strategy (pkg/util/strategicpatch, as the API
// server applies one to a built-in type) — and decodes the result into out.
// The errors are the API server's: 415 for another patch type, 400 for a
// patch that does not parse or apply or that changes the object's name.
func PatchObject(name string, pt types.PatchType, data []byte, obj, out metav1.Object) error {
	doc, err := json.Marshal(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	var patched []byte
	switch pt {
	case types.MergePatchType:
		patched, err = jsonpatch.MergePatch(doc, data)
	case types.JSONPatchType:
		var p jsonpatch.Patch
		if p, err = jsonpatch.DecodePatch(data); err == nil {
			patched, err = p.Apply(doc)
		}
	case types.StrategicMergePatchType:
		patched, err = strategicpatch.StrategicMergePatch(doc, data, out)
	default:
		return unsupportedPatch(true)
	}
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if err := json.Unmarshal(patched, out); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if out.GetName() != name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", out.GetName(), name))
	}
	return nil
}

// unsupportedPatch is the 415 of a patch type the resource does not take;
// a built-in type also takes strategic merge patches, a custom resource
// does not.
func unsupportedPatch(strategic bool) error {
	accepted := []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.ApplyYAMLPatchType)}
	if strategic {
		accepted = append(accepted, string(types.StrategicMergePatchType))
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(accepted, ", "),
	}}
}

// NotInstalled is the API server's answer to a request for a resource it
// does not serve, such as Karpenter's on a cluster without its CRDs.
func NotInstalled(verb string, gvr schema.GroupVersionResource) error {
	return apierrors.NewGenericServerResponse(http.StatusNotFound, verb, gvr.GroupResource(), "", "", 0, false)
}
