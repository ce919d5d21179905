package kubecluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// StorageClass is the cluster's default StorageClass: the controller-manager
// provisions a hostPath volume for each claim at once, so claims are Bound
// before a pod that mounts them is scheduled, as with a real provisioner.
const StorageClass = "standard"

func createStorageClass(ctx context.Context, client kubernetes.Interface) error {
	binding := storagev1.VolumeBindingImmediate
	reclaim := corev1.PersistentVolumeReclaimDelete
	_, err := client.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        StorageClass,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner:       "kubernetes.io/host-path",
		ReclaimPolicy:     &reclaim,
		VolumeBindingMode: &binding,
	}, metav1.CreateOptions{})
	return ignoreExists(err)
}
