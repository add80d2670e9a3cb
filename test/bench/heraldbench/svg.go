package main

import (
	"fmt"
	"math"
	"strings"
)

// barChart draws labelled horizontal bars (value in the unit given).
func barChart(title, unit string, labels []string, values []float64) string {
	const w, rowH, left, right, top = 760, 34, 250, 90, 40
	h := top + rowH*len(labels) + 20
	maxV := 0.0
	for _, v := range values {
		maxV = math.Max(maxV, v)
	}
	if maxV == 0 {
		maxV = 1
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="13">`, w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="10" y="22" font-size="15" font-weight="bold">%s</text>`, esc(title))
	palette := []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1"}
	for i, l := range labels {
		y := top + i*rowH
		bw := float64(w-left-right) * values[i] / maxV
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`, left-8, y+20, esc(l))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`, left, y+5, math.Max(bw, 1), rowH-10, palette[i%len(palette)])
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s %s</text>`, float64(left)+bw+6, y+20, fmtNum(values[i]), esc(unit))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// series is one line of a line chart.
type series struct {
	name string
	xs   []float64
	ys   []float64
}

// lineChart draws series with a log-scaled x axis (queue sizes).
func lineChart(title, xLabel, yLabel string, ss []series) string {
	return chart(title, xLabel, yLabel, ss, true)
}

// linearChart draws series with a linear x axis (progress through a run).
func linearChart(title, xLabel, yLabel string, ss []series) string {
	return chart(title, xLabel, yLabel, ss, false)
}

func chart(title, xLabel, yLabel string, ss []series, logX bool) string {
	const w, h, left, right, top, bottom = 760, 380, 80, 170, 40, 50
	minX, maxX, maxY := math.Inf(1), math.Inf(-1), 0.0
	for _, s := range ss {
		for i := range s.xs {
			minX, maxX = math.Min(minX, s.xs[i]), math.Max(maxX, s.xs[i])
			maxY = math.Max(maxY, s.ys[i])
		}
	}
	if maxY == 0 || math.IsInf(minX, 0) {
		maxY, minX, maxX = 1, 1, 10
	}
	maxY *= 1.15
	lx := func(x float64) float64 {
		if maxX == minX {
			return left
		}
		if !logX {
			return left + (x-minX)/(maxX-minX)*float64(w-left-right)
		}
		return left + (math.Log10(x)-math.Log10(minX))/(math.Log10(maxX)-math.Log10(minX))*float64(w-left-right)
	}
	ly := func(y float64) float64 { return float64(h-bottom) - y/maxY*float64(h-top-bottom) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="13">`, w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="10" y="22" font-size="15" font-weight="bold">%s</text>`, esc(title))
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`, left, h-bottom, w-right, h-bottom)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`, left, top, left, h-bottom)
	for i := 0; i <= 4; i++ {
		y := maxY * float64(i) / 4
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`, left-6, ly(y)+4, fmtNum(y))
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`, left, ly(y), w-right, ly(y))
	}
	if logX {
		for x := minX; x <= maxX*1.0001; x *= 10 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`, lx(x), h-bottom+18, fmtNum(x))
		}
	} else {
		for i := 0; i <= 4; i++ {
			x := minX + (maxX-minX)*float64(i)/4
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`, lx(x), h-bottom+18, fmtNum(x))
		}
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`, (left+w-right)/2, h-10, esc(xLabel))
	fmt.Fprintf(&b, `<text x="14" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle">%s</text>`, (top+h-bottom)/2, (top+h-bottom)/2, esc(yLabel))
	palette := []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f", "#bab0ac", "#ff9da7"}
	for i, s := range ss {
		c := palette[i%len(palette)]
		var pts []string
		for k := range s.xs {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", lx(s.xs[k]), ly(s.ys[k])))
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`, lx(s.xs[k]), ly(s.ys[k]), c)
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`, strings.Join(pts, " "), c)
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="14" height="4" fill="%s"/><text x="%d" y="%d">%s</text>`, w-right+12, top+10+i*20, c, w-right+32, top+16+i*20, esc(s.name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func fmtNum(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.3gk", v/1e3)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func esc(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	return r.Replace(s)
}
