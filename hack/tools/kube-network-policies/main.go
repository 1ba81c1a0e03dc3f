// Command kube-network-policies runs the upstream SIG Network NetworkPolicy enforcer
// (sigs.k8s.io/kube-network-policies, pinned in go.mod) as a host process of the local test
// cluster: the same controller as upstream's cmd/main.go, but with the API server taken from
// a kubeconfig file, since the bed runs it outside any Pod. Test infrastructure, not product
// code.
package main

import (
	"context"
	"flag"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sys/unix"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kube-network-policies/pkg/networkpolicy"
)

func main() {
	var (
		kubeconfig, nodeName, metrics string
		queueID                       int
		failOpen                      bool
	)
	flag.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the API server (required)")
	flag.StringVar(&nodeName, "hostname-override", "", "name of this Node (default: the hostname)")
	flag.StringVar(&metrics, "metrics-bind-address", "127.0.0.1:9080", "address of /metrics")
	flag.IntVar(&queueID, "nfqueue-id", 100, "nfqueue number the packets are queued to")
	flag.BoolVar(&failOpen, "fail-open", false, "let packets through while the controller is down")
	klog.InitFlags(nil)
	flag.Parse()
	if kubeconfig == "" {
		klog.Fatal("--kubeconfig is required")
	}
	if nodeName == "" {
		h, err := os.Hostname()
		if err != nil {
			klog.Fatalf("hostname: %v", err)
		}
		nodeName = h
	}
	ctx, cancel := signal.NotifyContext(context.Background(), unix.SIGINT, unix.SIGTERM)
	defer cancel()

	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		klog.Fatalf("kubeconfig: %v", err)
	}
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		klog.Fatalf("client: %v", err)
	}
	factory := informers.NewSharedInformerFactory(clientset, 0)
	http.Handle("/metrics", promhttp.Handler())
	go func() { klog.Error(http.ListenAndServe(metrics, nil)) }()

	ctrl, err := networkpolicy.NewController(clientset,
		factory.Networking().V1().NetworkPolicies(),
		factory.Core().V1().Namespaces(),
		factory.Core().V1().Pods(),
		nil, nil, nil, nil,
		networkpolicy.Config{
			FailOpen:            failOpen,
			QueueID:             queueID,
			NodeName:            nodeName,
			NetfilterBug1766Fix: true,
			// containerd 1.6 has no NRI: Pod IPs come from the API server.
			NRIdisabled: true,
		})
	if err != nil {
		klog.Fatalf("network policy controller: %v", err)
	}
	go func() {
		if err := ctrl.Run(ctx); err != nil {
			klog.Error(err)
		}
	}()
	factory.Start(ctx.Done())
	<-ctx.Done()
	time.Sleep(2 * time.Second) // let the controller remove its nftables table
}
