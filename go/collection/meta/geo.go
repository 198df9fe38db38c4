package meta

import (
	"fmt"
	"math"
)

// This file holds the geo conditions: a value at a path is a geo point
// when it is an object whose "lat" and "lon" keys hold numbers (other keys
// allowed), as Qdrant reads payloads; each condition holds when one such
// point at the path, or one element of a list there, lies in its shape.
// The shapes and their boundaries are those of qdrant-client's local mode
// (Qdrant's reference in Python), so the inequalities below are strict.

// GeoPoint is a point on Earth in degrees.
type GeoPoint struct{ Lon, Lat float64 }

// EarthRadius is the mean Earth radius in metres (IUGG), the one Qdrant's
// haversine distance uses.
const EarthRadius = 6371008.8

// GeoDistance is the haversine distance between a and b in metres.
func GeoDistance(a, b GeoPoint) float64 {
	lon1, lat1 := a.Lon*math.Pi/180, a.Lat*math.Pi/180
	lon2, lat2 := b.Lon*math.Pi/180, b.Lat*math.Pi/180
	dlon, dlat := lon2-lon1, lat2-lat1
	h := math.Pow(math.Sin(dlat/2), 2) + math.Cos(lat1)*math.Cos(lat2)*math.Pow(math.Sin(dlon/2), 2)
	return EarthRadius * 2 * math.Asin(math.Sqrt(h))
}

type geoKind uint8

const (
	geoBox geoKind = iota
	geoRadius
	geoPolygon
)

// geoShape is what a nodeGeo tests points against.
type geoShape struct {
	kind                 geoKind
	topLeft, bottomRight GeoPoint   // geoBox
	center               GeoPoint   // geoRadius
	radius               float64    // geoRadius, metres
	exterior             []GeoPoint // geoPolygon, closing point dropped
	interiors            [][]GeoPoint
}

func checkGeoPoints(pts ...GeoPoint) error {
	for _, p := range pts {
		if math.IsNaN(p.Lat) || math.IsNaN(p.Lon) || math.IsInf(p.Lat, 0) || math.IsInf(p.Lon, 0) {
			return fmt.Errorf("%w: geo point {lon: %v, lat: %v} is not finite", ErrInvalidFilter, p.Lon, p.Lat)
		}
	}
	return nil
}

func geoLeaf(p Path, s *geoShape) *Filter {
	n := newLeaf(nodeGeo, p)
	n.geo = s
	return wrap(n)
}

// GeoBoundingBox matches a point strictly inside the box: latitude below
// topLeft's and above bottomRight's, longitude between topLeft's and
// bottomRight's, or outside them when topLeft.Lon > bottomRight.Lon (a
// box across the antimeridian).
func GeoBoundingBox(p Path, topLeft, bottomRight GeoPoint) (*Filter, error) {
	if err := checkGeoPoints(topLeft, bottomRight); err != nil {
		return nil, err
	}
	return geoLeaf(p, &geoShape{kind: geoBox, topLeft: topLeft, bottomRight: bottomRight}), nil
}

// GeoRadius matches a point closer than radius metres to center
// (GeoDistance).
func GeoRadius(p Path, center GeoPoint, radius float64) (*Filter, error) {
	if err := checkGeoPoints(center); err != nil {
		return nil, err
	}
	if math.IsNaN(radius) {
		return nil, fmt.Errorf("%w: geo radius NaN", ErrInvalidFilter)
	}
	return geoLeaf(p, &geoShape{kind: geoRadius, center: center, radius: radius}), nil
}

// GeoPolygon matches a point inside the exterior ring and inside none of
// the interior rings (holes), a point on any ring's boundary being
// outside. A ring is at least three points; a last point equal to the
// first (a closed ring, as Qdrant requires them) is dropped.
func GeoPolygon(p Path, exterior []GeoPoint, interiors [][]GeoPoint) (*Filter, error) {
	s := &geoShape{kind: geoPolygon}
	ring := func(pts []GeoPoint, what string) ([]GeoPoint, error) {
		if err := checkGeoPoints(pts...); err != nil {
			return nil, err
		}
		if len(pts) > 1 && pts[0] == pts[len(pts)-1] {
			pts = pts[:len(pts)-1]
		}
		if len(pts) < 3 {
			return nil, fmt.Errorf("%w: geo polygon %s ring has fewer than 3 distinct points", ErrInvalidFilter, what)
		}
		return append([]GeoPoint(nil), pts...), nil
	}
	var err error
	if s.exterior, err = ring(exterior, "exterior"); err != nil {
		return nil, err
	}
	for _, in := range interiors {
		r, err := ring(in, "interior")
		if err != nil {
			return nil, err
		}
		s.interiors = append(s.interiors, r)
	}
	return geoLeaf(p, s), nil
}

// geoPointOf reads v as a geo point: an object with numbers at "lat" and
// "lon".
func geoPointOf(v value) (GeoPoint, bool) {
	if v.kind != kindObject {
		return GeoPoint{}, false
	}
	lat, okLat := fieldOf(v, "lat")
	lon, okLon := fieldOf(v, "lon")
	if !okLat || !okLon || lat.kind != kindNumber || lon.kind != kindNumber {
		return GeoPoint{}, false
	}
	return GeoPoint{Lon: lon.num, Lat: lat.num}, true
}

func fieldOf(v value, key string) (value, bool) {
	lo, hi := 0, len(v.fields)
	for lo < hi {
		mid := (lo + hi) / 2
		switch k := v.fields[mid].key; {
		case k == key:
			return v.fields[mid].val, true
		case k < key:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return value{}, false
}

// contains reports whether the shape holds pt.
func (s *geoShape) contains(pt GeoPoint) bool {
	switch s.kind {
	case geoBox:
		var lonOK bool
		if s.topLeft.Lon > s.bottomRight.Lon {
			lonOK = pt.Lon > s.topLeft.Lon || pt.Lon < s.bottomRight.Lon
		} else {
			lonOK = s.topLeft.Lon < pt.Lon && pt.Lon < s.bottomRight.Lon
		}
		return lonOK && s.topLeft.Lat > pt.Lat && pt.Lat > s.bottomRight.Lat
	case geoRadius:
		return GeoDistance(pt, s.center) < s.radius
	}
	if !inRing(pt, s.exterior, true) {
		return false
	}
	for _, hole := range s.interiors {
		if inRing(pt, hole, false) {
			return false
		}
	}
	return true
}

// inRing is the even-odd test of qdrant-client's local mode, with x the
// latitude and y the longitude; a point on the boundary is inside iff
// !ignoreBoundary.
func inRing(pt GeoPoint, ring []GeoPoint, ignoreBoundary bool) bool {
	px, py := pt.Lat, pt.Lon
	inside := false
	j := len(ring) - 1
	for i := range ring {
		xi, yi := ring[i].Lat, ring[i].Lon
		xj, yj := ring[j].Lat, ring[j].Lon
		if py*(xi-xj)+yi*(xj-px)+yj*(px-xi) == 0 && (xi-px)*(xj-px) <= 0 && (yi-py)*(yj-py) <= 0 {
			return !ignoreBoundary
		}
		if (yi > py) != (yj > py) && px < (xj-xi)*(py-yi)/(yj-yi)+xi {
			inside = !inside
		}
		j = i
	}
	return inside
}

// latLonBounds returns the latitude and longitude intervals that every
// point the shape holds lies in (a union of intervals; a superset), for
// narrowing candidates with the numeric postings of the points' "lat" and
// "lon" keys; no longitude interval means longitudes are not bounded.
func (s *geoShape) latLonBounds() (lat, lon []interval[float64]) {
	var la, lo interval[float64]
	switch s.kind {
	case geoBox:
		la.tighten(opGt, s.bottomRight.Lat)
		la.tighten(opLt, s.topLeft.Lat)
		if s.topLeft.Lon <= s.bottomRight.Lon {
			lo.tighten(opGt, s.topLeft.Lon)
			lo.tighten(opLt, s.bottomRight.Lon)
			return []interval[float64]{la}, []interval[float64]{lo}
		}
		return []interval[float64]{la}, nil
	case geoRadius:
		// Along a meridian the distance is R·|Δlat|, and no path between
		// two points is shorter than their latitude difference; the slack
		// covers rounding in the haversine formula. A latitude beyond
		// ±90, which no real point has but a payload may, folds over the
		// pole in the formula: such points stay candidates.
		d := s.radius / EarthRadius * 180 / math.Pi
		d += 1e-9 * (1 + math.Abs(d))
		la.tighten(opGte, s.center.Lat-d)
		la.tighten(opLte, s.center.Lat+d)
		var south, north interval[float64]
		south.tighten(opLt, -90)
		north.tighten(opGt, 90)
		return []interval[float64]{la, south, north}, nil
	}
	// A point outside the exterior ring's box crosses the ring an even
	// number of times (or none) in the even-odd test.
	lowest, highest := s.exterior[0], s.exterior[0]
	for _, p := range s.exterior[1:] {
		lowest.Lat, lowest.Lon = min(lowest.Lat, p.Lat), min(lowest.Lon, p.Lon)
		highest.Lat, highest.Lon = max(highest.Lat, p.Lat), max(highest.Lon, p.Lon)
	}
	la.tighten(opGte, lowest.Lat)
	la.tighten(opLte, highest.Lat)
	lo.tighten(opGte, lowest.Lon)
	lo.tighten(opLte, highest.Lon)
	return []interval[float64]{la}, []interval[float64]{lo}
}
