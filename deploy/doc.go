// Package deploy holds no code: it is the home of the deployment files —
// the Dockerfile at the repository root and the kustomize base in
// kubernetes/base — and of the tests that validate them (kubeconform
// against the Kubernetes schemas of a pinned release, and the rules a
// replicated gateway needs: readiness on /readyz, a non-root static image,
// secrets by reference only, selectors that match).
package deploy
