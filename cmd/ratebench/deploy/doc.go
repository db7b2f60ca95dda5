// Package deploy holds the files that run ratebench attack as sharded
// Kubernetes Jobs (Dockerfile, Job manifests, submit.sh) and the same on
// one machine (local.sh); see README.md. Its test checks the manifests.
package deploy
