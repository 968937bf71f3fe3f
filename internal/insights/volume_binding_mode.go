package insights

import (
	"fmt"

	storagev1 "k8s.io/api/storage/v1"
)

func init() { Register(volumeBindingMode{}) }

// ebsProvisioners are the provisioners of EBS volumes: the EBS CSI driver,
// EKS Auto Mode's, and the in-tree plugin.
var ebsProvisioners = map[string]bool{
	"ebs.csi.aws.com":           true,
	"ebs.csi.eks.amazonaws.com": true,
	"kubernetes.io/aws-ebs":     true,
}

// volumeBindingMode finds EBS StorageClasses that bind volumes Immediately:
// the volume gets a zone before its pod is scheduled, so the pod can only
// run in that zone, and a replacement node group without capacity there
// leaves it Pending. WARNING.
type volumeBindingMode struct{}

func (volumeBindingMode) Info() Info {
	return Info{
		ID:    "volume-binding-mode",
		Title: "EBS StorageClasses with Immediate volume binding",
		Help: "An EBS volume lives in one Availability Zone. With volumeBindingMode Immediate (the default) it is created, in a zone chosen without the pod, " +
			"as soon as the claim exists; the pod then runs only in that zone, and a node replacement without room there leaves it Pending. WARNING.",
		Needs: NeedsObjects,
	}
}

func (volumeBindingMode) Run(in *Input) []Finding {
	var out []Finding
	for _, o := range in.Kind("StorageClass") {
		sc, ok := o.Typed.(*storagev1.StorageClass)
		if !ok || !ebsProvisioners[sc.Provisioner] {
			continue
		}
		if sc.VolumeBindingMode != nil && *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
			continue
		}
		mode, field := "Immediate (the default)", "provisioner"
		if sc.VolumeBindingMode != nil {
			mode, field = string(*sc.VolumeBindingMode), "volumeBindingMode"
		}
		out = append(out, o.Finding(Warning, field,
			fmt.Sprintf("%s (%s) binds volumes %s: each EBS volume gets a zone before its pod is scheduled, and a replacement node without room in that zone leaves the pod Pending",
				o, sc.Provisioner, mode),
			fmt.Sprintf("Create a StorageClass with volumeBindingMode: WaitForFirstConsumer (the field cannot be changed in place) and use it for new claims; check that every zone of %s's volumes has node capacity during the upgrade.", o.Name)))
	}
	return out
}
