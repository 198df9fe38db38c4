package qdrant

import (
	pb "github.com/strata-db/strata/go/server/qdrant/qdrantpb"
)

// formulaJSON is a gRPC Formula in the JSON form formulaOf reads: the
// expression tree node for node, the defaults as a payload's JSON.
func formulaJSON(f *pb.Formula) (any, error) {
	expr, err := expressionJSON(f.GetExpression(), 0)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"formula": expr}
	if len(f.GetDefaults()) > 0 {
		d, err := payloadJSON(f.GetDefaults())
		if err != nil {
			return nil, err
		}
		out["defaults"] = d
	}
	return out, nil
}

func expressionsJSON(list []*pb.Expression, depth int) ([]any, error) {
	out := make([]any, len(list))
	for i, e := range list {
		var err error
		if out[i], err = expressionJSON(e, depth+1); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// expressionJSON translates one Expression; depth bounds the recursion
// here as formulaOf bounds it (a message can nest deeper than JSON).
func expressionJSON(e *pb.Expression, depth int) (any, error) {
	if depth > maxFormulaDepth {
		return nil, badRequestf("query.formula: a formula nested deeper than %d levels", maxFormulaDepth)
	}
	one := func(name string, kid *pb.Expression) (any, error) {
		v, err := expressionJSON(kid, depth+1)
		if err != nil {
			return nil, err
		}
		return map[string]any{name: v}, nil
	}
	switch k := e.GetVariant().(type) {
	case *pb.Expression_Constant:
		return float64(k.Constant), nil
	case *pb.Expression_Variable:
		return k.Variable, nil
	case *pb.Expression_Condition:
		return conditionJSON(k.Condition)
	case *pb.Expression_GeoDistance:
		return map[string]any{"geo_distance": map[string]any{"origin": geoJSON(k.GeoDistance.GetOrigin()), "to": k.GeoDistance.GetTo()}}, nil
	case *pb.Expression_Datetime:
		return map[string]any{"datetime": k.Datetime}, nil
	case *pb.Expression_DatetimeKey:
		return map[string]any{"datetime_key": k.DatetimeKey}, nil
	case *pb.Expression_Mult:
		list, err := expressionsJSON(k.Mult.GetMult(), depth)
		return map[string]any{"mult": list}, err
	case *pb.Expression_Sum:
		list, err := expressionsJSON(k.Sum.GetSum(), depth)
		return map[string]any{"sum": list}, err
	case *pb.Expression_Div:
		left, err := expressionJSON(k.Div.GetLeft(), depth+1)
		if err != nil {
			return nil, err
		}
		right, err := expressionJSON(k.Div.GetRight(), depth+1)
		if err != nil {
			return nil, err
		}
		div := map[string]any{"left": left, "right": right}
		if k.Div.ByZeroDefault != nil {
			div["by_zero_default"] = k.Div.GetByZeroDefault()
		}
		return map[string]any{"div": div}, nil
	case *pb.Expression_Pow:
		base, err := expressionJSON(k.Pow.GetBase(), depth+1)
		if err != nil {
			return nil, err
		}
		exponent, err := expressionJSON(k.Pow.GetExponent(), depth+1)
		if err != nil {
			return nil, err
		}
		return map[string]any{"pow": map[string]any{"base": base, "exponent": exponent}}, nil
	case *pb.Expression_Neg:
		return one("neg", k.Neg)
	case *pb.Expression_Abs:
		return one("abs", k.Abs)
	case *pb.Expression_Sqrt:
		return one("sqrt", k.Sqrt)
	case *pb.Expression_Exp:
		return one("exp", k.Exp)
	case *pb.Expression_Log10:
		return one("log10", k.Log10)
	case *pb.Expression_Ln:
		return one("ln", k.Ln)
	case *pb.Expression_ExpDecay:
		return decayJSON("exp_decay", k.ExpDecay, depth)
	case *pb.Expression_GaussDecay:
		return decayJSON("gauss_decay", k.GaussDecay, depth)
	case *pb.Expression_LinDecay:
		return decayJSON("lin_decay", k.LinDecay, depth)
	case nil:
		return nil, badRequestf("query.formula: an expression without a variant")
	}
	return nil, unsupportedf("query.formula: expression %T", e.GetVariant())
}

func decayJSON(name string, d *pb.DecayParamsExpression, depth int) (any, error) {
	x, err := expressionJSON(d.GetX(), depth+1)
	if err != nil {
		return nil, err
	}
	params := map[string]any{"x": x}
	if d.Target != nil {
		if params["target"], err = expressionJSON(d.GetTarget(), depth+1); err != nil {
			return nil, err
		}
	}
	if d.Scale != nil {
		params["scale"] = d.GetScale()
	}
	if d.Midpoint != nil {
		params["midpoint"] = d.GetMidpoint()
	}
	return map[string]any{name: params}, nil
}
