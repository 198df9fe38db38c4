package qdrant

import (
	"context"
	"encoding/json"
	"fmt"
)

// Update batches (POST /collections/{name}/points/batch, Qdrant's
// UpdateOperations): each operation is the body of the call it names,
// decoded as strictly, and the calls run in order, each through the same
// function as its own route. Every operation is decoded before any runs,
// so a malformed one changes nothing; an operation that fails stops the
// batch with its error, the ones before it written (as Qdrant applies
// them one after another). The answer is one UpdateResult per operation.

// updateBatchRequest is Qdrant's UpdateOperations.
type updateBatchRequest struct {
	Operations []map[string]json.RawMessage `json:"operations"`
}

// batchOperation is one decoded operation.
type batchOperation func(ctx context.Context, name string) (updateResult, error)

// decodeAs strictly decodes raw as the body of call and returns it bound.
func decodeAs[Req any](raw json.RawMessage, at string, call qdrantCall[Req, updateResult]) (batchOperation, error) {
	req := new(Req)
	if err := strictUnmarshal(raw, req); err != nil {
		return nil, badRequestf("Format error in JSON body: %s: %v", at, err)
	}
	return bound(req, call), nil
}

// updateBatch is batch_update_points.
func (h *Handler) updateBatch(ctx context.Context, name string, req *updateBatchRequest) ([]updateResult, error) {
	if _, err := h.named(name); err != nil {
		return nil, err
	}
	ops := make([]batchOperation, len(req.Operations))
	for i, op := range req.Operations {
		if len(op) != 1 {
			return nil, badRequestf("operations[%d]: one of upsert, delete, set_payload, overwrite_payload, "+
				"delete_payload, clear_payload, update_vectors, delete_vectors (got %d keys)", i, len(op))
		}
		for kind, body := range op {
			at := fmt.Sprintf("operations[%d].%s", i, kind)
			var err error
			switch kind {
			case "upsert":
				ops[i], err = decodeAs(body, at, h.upsert)
			case "delete":
				ops[i], err = decodeAs(body, at, h.deletePoints)
			case "set_payload":
				ops[i], err = decodeAs(body, at, h.setPayload)
			case "overwrite_payload":
				ops[i], err = decodeAs(body, at, h.overwritePayload)
			case "delete_payload":
				ops[i], err = decodeAs(body, at, h.deletePayload)
			case "clear_payload":
				ops[i], err = decodeAs(body, at, h.clearPayload)
			case "update_vectors":
				ops[i], err = decodeAs(body, at, h.updateVectors)
			case "delete_vectors":
				ops[i], err = decodeAs(body, at, h.deleteVectors)
			default:
				err = badRequestf("%s: unknown operation (one of upsert, delete, set_payload, overwrite_payload, "+
					"delete_payload, clear_payload, update_vectors, delete_vectors)", at)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return h.runBatch(ctx, name, ops)
}

// bound is req bound to call: an operation of a batch the gRPC door
// translated (its operations come typed, not as JSON bodies).
func bound[Req any](req *Req, call qdrantCall[Req, updateResult]) batchOperation {
	return func(ctx context.Context, name string) (updateResult, error) { return call(ctx, name, req) }
}

// runBatch runs the decoded operations of a batch in order and stops at
// the first that fails (the ones before it stay written).
func (h *Handler) runBatch(ctx context.Context, name string, ops []batchOperation) ([]updateResult, error) {
	if _, err := h.named(name); err != nil {
		return nil, err
	}
	out := make([]updateResult, 0, len(ops))
	for _, op := range ops {
		res, err := op(ctx, name)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}
