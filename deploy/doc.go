// Package deploy holds no code. It is the home of the deployment files, the
// Dockerfile at the repository root and the kustomize base in
// kubernetes/base. It holds the tests that validate them: kubeconform
// against the Kubernetes schemas of a pinned release, and the rules a
// replicated gateway needs. Those are readiness on /readyz, a non-root
// static image, secrets by reference only, and selectors that match.
package deploy
