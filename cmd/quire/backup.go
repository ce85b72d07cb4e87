package main

import (
	"errors"
	"io"

	"github.com/quire/quire/internal/backup"
	"github.com/spf13/cobra"
)

// backupCmd is quire backup: a consistent archive of a data root, taken
// while servers run on it (internal/backup; docs/operations.md).
func backupCmd(stderr io.Writer) *cobra.Command {
	var data, to string
	c := &cobra.Command{
		Use:     "backup --data DIR --to FILE",
		Short:   "Archive a data root, consistently, while quire runs on it",
		Example: "  quire backup --data /var/lib/quire --to /backups/quire-$(date +%F).tar.gz",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if data == "" || to == "" {
				return usageError{errors.New("quire backup needs --data and --to")}
			}
			_, err := backup.Backup(c.Context(), data, to, stderr)
			return err
		},
	}
	c.Flags().StringVar(&data, "data", "", "data root to archive (quire serve's --data)")
	c.Flags().StringVar(&to, "to", "", "file to write the archive to (a gzip-compressed tar with a manifest of digests)")
	return c
}

// restoreCmd is quire restore: an archive of quire backup unpacked into a
// new data root, every file checked against the manifest first.
func restoreCmd(stderr io.Writer) *cobra.Command {
	var from, data string
	c := &cobra.Command{
		Use:     "restore --from FILE --data NEWDIR",
		Short:   "Restore a quire backup into a new data root",
		Example: "  quire restore --from /backups/quire-2026-11-28.tar.gz --data /var/lib/quire-restored",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if from == "" || data == "" {
				return usageError{errors.New("quire restore needs --from and --data")}
			}
			_, err := backup.Restore(c.Context(), from, data, stderr)
			return err
		},
	}
	c.Flags().StringVar(&from, "from", "", "archive written by quire backup")
	c.Flags().StringVar(&data, "data", "", "new data root to restore into (must not exist or be empty)")
	return c
}

// usageError is a missing flag (exit code 2).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }
func (e usageError) ExitCode() int { return 2 }
