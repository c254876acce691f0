package offline

import (
	"os"
	"testing"

	"github.com/taskchat/taskchat/internal/store/storetest"
)

// TestMain gives the end-to-end tests, which run the offline model through
// the loop and the real task tools, a database of this package's own.
func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }
