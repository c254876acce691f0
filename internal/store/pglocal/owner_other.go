//go:build !unix

package pglocal

import "os/exec"

// account stands for the account a cluster belongs to, which is always
// this process's own where there is no root.
type account struct{}

func clusterOwner() (*account, error) { return nil, nil }

func (*account) runAs(*exec.Cmd)      {}
func (*account) chown(string) error   { return nil }
func (*account) reaches(string) error { return nil }
