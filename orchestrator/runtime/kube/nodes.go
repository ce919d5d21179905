package kube

import (
	"context"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listerv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// nodeCache watches the cluster's nodes (an informer, started on first
// use): the GPU inventory and the host-size checks read it on every
// launch and page, which must not cost an API call each.
type nodeCache struct {
	cli    kubernetes.Interface
	once   sync.Once
	lister listerv1.NodeLister
	synced cache.InformerSynced
	cancel context.CancelFunc
	err    error
}

func newNodeCache(cli kubernetes.Interface) *nodeCache { return &nodeCache{cli: cli} }

func (c *nodeCache) start() {
	c.once.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		c.cancel = cancel
		f := informers.NewSharedInformerFactory(c.cli, 0)
		inf := f.Core().V1().Nodes()
		c.lister, c.synced = inf.Lister(), inf.Informer().HasSynced
		f.Start(ctx.Done())
	})
}

func (c *nodeCache) stop() {
	if c.cancel != nil {
		c.cancel()
	}
}

// list returns the nodes by name, waiting for the first sync. Before the
// informer has synced (or when it cannot), it asks the API server.
func (c *nodeCache) list(ctx context.Context) ([]*corev1.Node, error) {
	c.start()
	var out []*corev1.Node
	if c.synced() {
		var err error
		if out, err = c.lister.List(labels.Everything()); err != nil {
			return nil, err
		}
	} else {
		l, err := c.cli.CoreV1().Nodes().List(ctx, listAll)
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// HostCPUs is the most CPUs one node can give a Pod: a flavor asking more
// can never be placed (orchestrator.Manager.ExceedsHost refuses it).
func (r *Runtime) HostCPUs(ctx context.Context) int {
	nodes, err := r.poolNodes(ctx)
	if err != nil {
		return 0
	}
	most := int64(0)
	for _, n := range nodes {
		if q, ok := n.Status.Allocatable[corev1.ResourceCPU]; ok && q.MilliValue()/1000 > most {
			most = q.MilliValue() / 1000
		}
	}
	return int(most)
}

// HostMemoryBytes is the most memory one node can give a Pod.
func (r *Runtime) HostMemoryBytes(ctx context.Context) int64 {
	nodes, err := r.poolNodes(ctx)
	if err != nil {
		return 0
	}
	most := int64(0)
	for _, n := range nodes {
		if q, ok := n.Status.Allocatable[corev1.ResourceMemory]; ok && q.Value() > most {
			most = q.Value()
		}
	}
	return most
}

// poolNodes are the nodes workbenches may run on: all, or those carrying
// every one of Config.NodeLabels.
func (r *Runtime) poolNodes(ctx context.Context) ([]*corev1.Node, error) {
	nodes, err := r.nodes.list(ctx)
	if err != nil || len(r.cfg.NodeLabels) == 0 {
		return nodes, err
	}
	sel := labels.SelectorFromSet(r.cfg.NodeLabels)
	out := nodes[:0:0]
	for _, n := range nodes {
		if sel.Matches(labels.Set(n.Labels)) {
			out = append(out, n)
		}
	}
	return out, nil
}
