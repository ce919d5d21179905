package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"workbench/orchestrator/runtime"
)

// The portal names things as Docker allows ("wb-Ab_3x-…", user names with
// '_'); Kubernetes wants DNS-1123 names and label values. Everything the
// portal sets is kept verbatim in annotations (the authority), and the
// object's name and selector labels are derived from it deterministically.

const (
	// annLabels holds the portal's labels of the object as JSON: what
	// Inspect and List return as ContainerInfo.Labels.
	annLabels = "workbench.portal/labels"
	// annName is the name the portal gave (container or volume name).
	annName = "workbench.portal/name"
	// annImage is the image as the portal asked for it.
	annImage = "workbench.portal/image"
	// annNetwork is the Spec.Network the Pod stands on (Endpoint's key).
	annNetwork = "workbench.portal/network"
	// annGPUs lists the unit ids the Pod was created for.
	annGPUs = "workbench.portal/gpus"
	// labelManaged marks every object of every portal.
	labelManaged = "app.kubernetes.io/managed-by"
	managedBy    = "workbench"
	// labelRole tells workbench Pods from home PVCs in selectors.
	labelRole = "workbench.portal/role"
	// gateStart holds a created Pod out of scheduling until Start.
	gateStart = "workbench.portal/start"
	// containerName is the workbench's one container in the Pod.
	containerName = "jupyter"
)

var dns1123Label = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// objectName turns a portal name into a valid object name: as it is when
// it already is one, else a cleaned prefix and a hash of the original (so
// two portal names never share an object). objectName(objectName(x)) ==
// objectName(x), so callers may pass either form.
func objectName(name string) string {
	if dns1123Label.MatchString(name) {
		return name
	}
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		}
		return '-'
	}, name)
	if len(clean) > 46 {
		clean = clean[:46]
	}
	clean = strings.Trim(clean, "-")
	if clean == "" {
		clean = "wb"
	}
	return clean + "-" + shortHash(name)
}

// labelValue is v when Kubernetes accepts it as a label value, else a
// hash of it: selectors compare these, the annotations keep the original.
func labelValue(v string) string {
	if len(v) <= 63 && labelValueRe.MatchString(v) {
		return v
	}
	return "h-" + shortHash(v)
}

var labelValueRe = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:6])
}

// objectMeta builds the metadata of an object the portal owns: the name,
// selector labels and the verbatim labels as an annotation.
func (r *Runtime) objectMeta(name, role string, labels map[string]string) metav1.ObjectMeta {
	l := map[string]string{labelManaged: managedBy, labelRole: role}
	for _, k := range []string{runtime.LabelInstall, runtime.LabelID, runtime.LabelOwner, runtime.LabelKind} {
		if v, ok := labels[k]; ok {
			l[k] = labelValue(v)
		}
	}
	raw, _ := json.Marshal(labels)
	return metav1.ObjectMeta{Name: objectName(name), Namespace: r.cfg.Namespace, Labels: l,
		Annotations: map[string]string{annLabels: string(raw), annName: name}}
}

// portalLabels reads back the labels objectMeta stored.
func portalLabels(m metav1.ObjectMeta) map[string]string {
	out := map[string]string{}
	if err := json.Unmarshal([]byte(m.Annotations[annLabels]), &out); err != nil || len(out) == 0 {
		return maps.Clone(m.Labels)
	}
	return out
}

// installSelector selects the objects of one install in one role.
func installSelector(installID, role string) string {
	return labelManaged + "=" + managedBy + "," + labelRole + "=" + role + "," + runtime.LabelInstall + "=" + labelValue(installID)
}

// Roles of labelRole.
const (
	roleWorkbench = "workbench"
	roleHome      = "home"
)

var (
	listOne = metav1.ListOptions{Limit: 1}
	listAll = metav1.ListOptions{}
)
