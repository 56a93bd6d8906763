"""The one plotting helper of scripts/: points with 95% error bars, one series per colour, on
axes with a dashed zero line, written as a small SVG. Standard library only.

    plot = Plot(x_range=(1e5, 1e7), y_range=(-200, 200), x_label="...", y_label="...", log_x=True)
    plot.series("256 hidden", [(x, elo, error), ...], connect=True)
    plot.save("curve.svg")
"""
import math

WIDTH, HEIGHT, MARGIN = 640, 400, 60
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]


class Plot:
    def __init__(self, x_range, y_range, x_label, y_label, log_x=False, zero_label=""):
        self.log_x = log_x
        self.x_lo, self.x_hi = (math.log10(v) for v in x_range) if log_x else x_range
        self.y_lo, self.y_hi = y_range
        self.count = 0
        zero = self.sy(0)
        self.out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
            'font-family="sans-serif" font-size="12">',
            f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
            f'<line x1="{MARGIN}" y1="{zero:.1f}" x2="{WIDTH - MARGIN}" y2="{zero:.1f}" '
            'stroke="#888" stroke-dasharray="4 3"/>',
            f'<text x="{WIDTH - MARGIN}" y="{zero - 4:.1f}" text-anchor="end">{zero_label}</text>',
            f'<line x1="{MARGIN}" y1="{HEIGHT - MARGIN}" x2="{WIDTH - MARGIN}" '
            f'y2="{HEIGHT - MARGIN}" stroke="black"/>',
            f'<line x1="{MARGIN}" y1="{MARGIN}" x2="{MARGIN}" y2="{HEIGHT - MARGIN}" stroke="black"/>',
            f'<text x="{WIDTH / 2}" y="{HEIGHT - 18}" text-anchor="middle">{x_label}</text>',
            f'<text x="16" y="{HEIGHT / 2}" text-anchor="middle" '
            f'transform="rotate(-90 16 {HEIGHT / 2})">{y_label}</text>',
        ]

    def sx(self, x):
        x = math.log10(x) if self.log_x else x
        return MARGIN + (x - self.x_lo) / (self.x_hi - self.x_lo) * (WIDTH - 2 * MARGIN)

    def sy(self, y):
        return HEIGHT - MARGIN - (y - self.y_lo) / (self.y_hi - self.y_lo) * (HEIGHT - 2 * MARGIN)

    def x_ticks(self, ticks):
        """(value, label) pairs under the x axis."""
        for value, label in ticks:
            x = self.sx(value)
            self.out.append(f'<line x1="{x:.1f}" y1="{HEIGHT - MARGIN}" x2="{x:.1f}" '
                            f'y2="{HEIGHT - MARGIN + 5}" stroke="black"/>')
            self.out.append(f'<text x="{x:.1f}" y="{HEIGHT - MARGIN + 18}" '
                            f'text-anchor="middle">{label}</text>')

    def y_ticks(self, step):
        y = math.ceil(self.y_lo / step) * step
        while y <= self.y_hi:
            self.out.append(f'<text x="{MARGIN - 8}" y="{self.sy(y) + 4:.1f}" '
                            f'text-anchor="end">{y:g}</text>')
            y += step

    def series(self, label, points, connect=False, offset=0.0):
        """(x, y, error) points in the next colour, with the legend; an error of 0 draws no bar.
        `offset` moves the series sideways by that many pixels, so series at one x stay apart."""
        colour = COLOURS[self.count % len(COLOURS)]
        points = sorted(points)
        if connect and len(points) > 1:
            path = " ".join(f"{self.sx(x) + offset:.1f},{self.sy(y):.1f}" for x, y, _ in points)
            self.out.append(f'<polyline points="{path}" fill="none" stroke="{colour}"/>')
        for x, y, error in points:
            px = self.sx(x) + offset
            if error:
                self.out.append(f'<line x1="{px:.1f}" y1="{self.sy(y - error):.1f}" x2="{px:.1f}" '
                                f'y2="{self.sy(y + error):.1f}" stroke="{colour}"/>')
            self.out.append(f'<circle cx="{px:.1f}" cy="{self.sy(y):.1f}" r="4" fill="{colour}"/>')
        self.out.append(f'<text x="{WIDTH - MARGIN - 120}" y="{MARGIN + 16 * self.count}" '
                        f'fill="{colour}">{label}</text>')
        self.count += 1

    def save(self, path):
        with open(path, "w") as f:
            f.write("\n".join(self.out + ["</svg>"]) + "\n")
