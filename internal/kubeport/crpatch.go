package kubeport

import (
	"encoding/json"
	"fmt"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// PatchCustomResource applies a patch to a custom resource as the API
// server's patcher does, for an implementation that stores objects itself:
// it marshals obj, applies data as a JSON merge patch or a JSON patch, and
// decodes the result into out. The errors are the API server's: 415 for a
// patch type a custom resource does not take (strategic merge: CRDs declare
// no patch strategy), 400 for a patch that does not parse or apply or
// that changes the object's name.
func PatchCustomResource(name string, pt types.PatchType, data []byte, obj, out metav1.Object) error {
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
	default:
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure,
			Code:   http.StatusUnsupportedMediaType,
			Reason: metav1.StatusReasonUnsupportedMediaType,
			Message: fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s, %s, %s",
				types.JSONPatchType, types.MergePatchType, types.ApplyYAMLPatchType),
		}}
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

// NotInstalled is the API server's answer to a request for a resource it
// does not serve, such as Karpenter's on a cluster without its CRDs.
func NotInstalled(verb string, gvr schema.GroupVersionResource) error {
	return apierrors.NewGenericServerResponse(http.StatusNotFound, verb, gvr.GroupResource(), "", "", 0, false)
}
