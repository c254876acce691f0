//go:build unix

package pglocal

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// account is the system account a cluster belongs to when this process
// runs as root.
type account struct {
	name, home string
	uid, gid   uint32
}

// clusterOwner is nil for any account but root, which PostgreSQL refuses
// to run as: root's clusters belong to the postgres account, which Debian's
// package and PostgreSQL's own packages create.
func clusterOwner() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL does not run as root, and there is no postgres account to run it as (%v): "+
			"run as another user, or create the account (installing the postgresql package does)", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("the postgres account's uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("the postgres account's gid %q: %w", u.Gid, err)
	}
	return &account{name: u.Username, home: u.HomeDir, uid: uint32(uid), gid: uint32(gid)}, nil
}

// runAs makes cmd run as the account, with its group and no other.
func (a *account) runAs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: a.uid, Gid: a.gid}}
	cmd.Env = append(os.Environ(), "HOME="+a.home, "USER="+a.name, "LOGNAME="+a.name)
}

func (a *account) chown(path string) error {
	return os.Chown(path, int(a.uid), int(a.gid))
}

// reaches checks that the account can pass through every directory above
// dir, which root's own directories (its home, a test's temporary
// directory) do not let it.
func (a *account) reaches(dir string) error {
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return errors.New("no owner for " + p)
		}
		perm := info.Mode().Perm()
		var can bool
		switch {
		case st.Uid == a.uid:
			can = perm&0o100 != 0
		case st.Gid == a.gid:
			can = perm&0o010 != 0
		default:
			can = perm&0o001 != 0
		}
		if !can {
			return fmt.Errorf("as root, PostgreSQL runs as %s, which cannot enter %s (mode %v, owner uid %d): "+
				"choose a directory it can reach, or let others pass through that one (chmod o+x %s)", a.name, p, perm, st.Uid, p)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}
