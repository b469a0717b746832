package server

import (
	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/gateway"
)

// dropCopyGrant is the gateway's view of a drop-copy session's grants, nil
// for an order session.
func dropCopyGrant(sc *config.Session) *gateway.DropCopyGrant {
	if !sc.IsDropCopy() {
		return nil
	}
	return &gateway.DropCopyGrant{All: sc.CopyAll, Sessions: sc.CopySessions, Accounts: sc.CopyAccounts}
}
