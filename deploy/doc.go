// Package deploy holds no code. It is the home of the deployment files, the
// Dockerfile at the repository root and the kustomize base in
// kubernetes/base. It holds the tests that validate them: kubeconform
// against the Kubernetes schemas of a pinned release, and the rules a
// replicated gateway needs. Those are readiness on /readyz, a non-root
// static image, secrets by reference only, and selectors that match.
//
// The monitoring conventions live here too: a Grafana dashboard
// (grafana/mcpgate.json) and Prometheus alert rules
// (prometheus/alerts.yaml). Their tests parse them with Prometheus's own
// parsers and check every metric they name against a gateway's.
package deploy
