package kube_test

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"workbench/models"
)

// TestShippedRoleIsEnough: the portal run as a ServiceAccount bound only
// by deploy/kubernetes/rbac.yaml does the whole flow (lease, launch,
// events, stop, start, delete with its data, the GPU pool from the
// nodes), and may not touch what it has no business with.
func TestShippedRoleIsEnough(t *testing.T) {
	r := newKubeRig(t, 1, 8)
	r.stopPortal() // the admin's portal; the ServiceAccount's takes over
	applyShippedRBAC(t, r)
	cfg := r.c.ConfigAs(t, "workbench")
	cli := r.c.ClientAs(t, "workbench")
	r.startPortal(cli, cfg)
	// The portal takes the install lease in the background, as the
	// ServiceAccount (a CI run once looked before it had).
	var lastErr error
	r.eventually(2*time.Minute, "the install lease as the ServiceAccount", func() bool {
		held, err := r.m.LeaseStatus()
		if err != nil && (lastErr == nil || err.Error() != lastErr.Error()) {
			t.Logf("install lease: %v", err) // it retries
		}
		lastErr = err
		return held
	})

	devs, err := r.rt.Inventory().Devices(r.ctx)
	if err != nil || len(devs) != 8 {
		t.Fatalf("GPU pool as the ServiceAccount: %d devices (%v), want 8", len(devs), err)
	}
	wb := r.waitState(r.launch("rbac").ID, models.StateRunning)
	if err := r.m.Stop(r.ctx, wb.ID, "test"); err != nil {
		t.Fatal(err)
	}
	r.waitState(wb.ID, models.StateStopped)
	if err := r.m.Start(r.ctx, wb.ID, r.user); err != nil {
		t.Fatal(err)
	}
	r.waitState(wb.ID, models.StateRunning)
	if err := r.m.Delete(r.ctx, wb.ID, r.user, true); err != nil {
		t.Fatalf("delete with data: %v", err)
	}
	if held, err := r.m.LeaseStatus(); !held {
		t.Fatalf("install lease lost during the flow: %v", err)
	}

	// And nothing more.
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
	defer cancel()
	for what, err := range map[string]error{
		"delete a node":             cli.CoreV1().Nodes().Delete(ctx, r.pool["workbench.test/pool"]+"-0", metav1.DeleteOptions{DryRun: []string{"All"}}),
		"list secrets":              listErr(cli.CoreV1().Secrets(r.c.Namespace).List(ctx, metav1.ListOptions{})),
		"list pods in kube-system":  listErr(cli.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})),
		"create a role binding":     createErr(cli.RbacV1().RoleBindings(r.c.Namespace).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "x"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"}}, metav1.CreateOptions{})),
		"delete persistent volumes": cli.CoreV1().PersistentVolumes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}),
	} {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s as the portal: %v, want forbidden", what, err)
		}
	}
}

func listErr[T any](_ T, err error) error   { return err }
func createErr[T any](_ T, err error) error { return err }

// applyShippedRBAC creates deploy/kubernetes/rbac.yaml's objects for the
// test: the Role and RoleBinding in the test's namespace, the cluster-wide
// ones under names of the test's own, all bound to its ServiceAccount.
func applyShippedRBAC(t *testing.T, r *kubeRig) {
	t.Helper()
	raw, err := os.ReadFile("../../../deploy/kubernetes/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ns, suffix := r.c.Namespace, "-"+r.c.Namespace
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	rbac := r.c.Client.RbacV1()
	for {
		var obj struct {
			Kind string `json:"kind"`
		}
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			break
		}
		b, _ := yamlJSON(doc)
		_ = jsonUnmarshal(b, &obj)
		var cerr error
		switch obj.Kind {
		case "Role":
			var o rbacv1.Role
			mustUnmarshal(t, b, &o)
			o.Namespace = ns
			_, cerr = rbac.Roles(ns).Create(r.ctx, &o, metav1.CreateOptions{})
		case "RoleBinding":
			var o rbacv1.RoleBinding
			mustUnmarshal(t, b, &o)
			o.Namespace, o.Subjects[0].Namespace = ns, ns
			_, cerr = rbac.RoleBindings(ns).Create(r.ctx, &o, metav1.CreateOptions{})
		case "ClusterRole":
			var o rbacv1.ClusterRole
			mustUnmarshal(t, b, &o)
			o.Name += suffix
			_, cerr = rbac.ClusterRoles().Create(r.ctx, &o, metav1.CreateOptions{})
			name := o.Name
			t.Cleanup(func() { _ = rbac.ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{}) })
		case "ClusterRoleBinding":
			var o rbacv1.ClusterRoleBinding
			mustUnmarshal(t, b, &o)
			o.Name += suffix
			o.RoleRef.Name += suffix
			o.Subjects[0].Namespace = ns
			_, cerr = rbac.ClusterRoleBindings().Create(r.ctx, &o, metav1.CreateOptions{})
			name := o.Name
			t.Cleanup(func() { _ = rbac.ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{}) })
		default:
			t.Fatalf("unexpected %q in rbac.yaml", obj.Kind)
		}
		if cerr != nil {
			t.Fatalf("create %s: %v", obj.Kind, cerr)
		}
	}
}
