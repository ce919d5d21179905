// Package installtest proves the install as an operator does it: the
// shipped Dockerfile and docker-compose.yml, built without Docker Hub from
// base images made locally (scripts/install-test-bases.sh), run a portal
// that launches a workbench through its proxy and adopts it after `down`
// and `up` (TestComposeInstall, under `make test-install`: it builds the
// portal image); and the README's TLS proxy examples parse
// (TestTLSProxyExamplesParse, in `make test`).
package installtest
