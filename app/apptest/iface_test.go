package apptest_test

import (
	"github.com/quire/quire"
	"github.com/quire/quire/app/apptest"
)

// The fakes are the interfaces app finds on its stores.
var (
	_ quire.MetaStore    = (*apptest.Meta)(nil)
	_ quire.VersionStore = (*apptest.Versions)(nil)
	_ quire.LabelStore   = (*apptest.Versions)(nil)
	_ quire.ReviewStore  = (*apptest.Reviews)(nil)
	_ quire.LabelStore   = (*apptest.Reviews)(nil)
	_ quire.EventLog     = (*apptest.Events)(nil)
)

var _ quire.DraftRefs = apptest.DraftRefs{}
