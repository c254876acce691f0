package agent

import (
	"os"
	"testing"

	"github.com/taskchat/taskchat/internal/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }
