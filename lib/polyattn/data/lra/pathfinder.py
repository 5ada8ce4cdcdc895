"""Pathfinder (Linsley et al. 2018) at 32 x 32, the image task of the Long Range Arena.

Two circular markers and several curved contours ("snakes") on a black background; the label
is 1 when the markers sit at the two ends of one contour.  Written from the published
generator's description and its Pathfinder-32 parameters (LRA's ``curv_contour_length_14``):
window 32, padding 1, paddle length 2 and margin 1 (consecutive paddles' pivots are
``length + 2 margin`` = 4 px apart), continuity 1.0, seed distance 7, marker radius 1.5,
contour length 14 paddles, ``contour_length // 3`` paddles per distractor and
``20 // distractor_length`` distractors.  Easier presets use 6 (``curv_baseline``) and 9.

As published, each image grows two target snakes from seeds ``seed_distance`` apart near the
centre (the first seed at least ``2 seed_distance`` from the border), one paddle each in turn;
a new paddle's heading is drawn with weight ``max(cos(min(|turn| continuity, pi/2)), 0)^2``
among headings whose paddle stays free; then distractors grow from free seeds until they are
placed or under 1% of the image is free.  One marker goes on the origin of a target snake, the
other on the far end of the same snake (label 1) or of the other one (label 0).

Where this version differs, on purpose:

* a snake is one unbroken polyline (the published paddles leave a gap of ``margin`` at their
  joints), and the pixels of different snakes are never 8-neighbours.  So "joined by one
  path" means exactly "in one 8-connected component of non-zero pixels", which
  :func:`path_label` checks by flood fill;
* lines fall off linearly over 1 px from the centre line to a floor, so every drawn pixel is
  non-zero in uint8; paddles peak at ``paddle_contrast`` (0.75, i.e. 191), markers are 255
  (the published images are rescaled to their own maximum when saved);
* a target snake that gets stuck takes back one paddle, two the next time, and so on, up to
  ``backtracks`` times per image before the image starts again (published: the image starts
  again at once); images are made in memory and do not pass through PNG files.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch

PRESETS = {"curv_baseline": 6, "curv_contour_length_9": 9, "curv_contour_length_14": 14}


@dataclass(frozen=True)
class PathfinderConfig:
    size: int = 32
    padding: int = 1
    contour_length: int = 14
    paddle_length: float = 2.0
    paddle_margin: float = 1.0
    continuity: float = 1.0
    seed_distance: float = 7.0
    marker_radius: float = 1.5
    distractor_length: int | None = None      # contour_length // 3
    num_distractors: int | None = None        # 20 // distractor_length
    paddle_contrast: float = 0.75
    line_width: float = 1.0                   # pixels closer than this to the centre line are drawn
    floor: float = 0.4                        # intensity at the edge of a line, as a share of its peak
    headings: int = 36                        # candidate headings per paddle, 10 degrees apart (the
                                              # published circle of radius 3 px offers about 19)
    max_tries: int = 4                        # per distractor, as the published retrial count
    backtracks: int = 16                      # times target snakes may step back, per image

    @property
    def step(self) -> float:
        return self.paddle_length + 2 * self.paddle_margin

    @property
    def n_distractor_paddles(self) -> int:
        return self.distractor_length if self.distractor_length is not None else max(1, self.contour_length // 3)

    @property
    def n_distractors(self) -> int:
        return self.num_distractors if self.num_distractors is not None else 20 // self.n_distractor_paddles


def preset(name_or_length: str | int = "curv_contour_length_14", **overrides) -> PathfinderConfig:
    """The configuration for a preset name or a contour length (6, 9 or 14 published)."""
    length = PRESETS[name_or_length] if isinstance(name_or_length, str) else int(name_or_length)
    return replace(PathfinderConfig(contour_length=length), **overrides)


def _dilate(mask: np.ndarray) -> np.ndarray:
    """Each pixel and its 8 neighbours (a 3 x 3 box, applied as two 3-long passes)."""
    rows = mask.copy()
    rows[1:] |= mask[:-1]
    rows[:-1] |= mask[1:]
    out = rows.copy()
    out[:, 1:] |= rows[:, :-1]
    out[:, :-1] |= rows[:, 1:]
    return out


class _Canvas:
    def __init__(self, cfg: PathfinderConfig, rng: np.random.Generator):
        self.cfg, self.rng = cfg, rng
        n = cfg.size
        self.yy, self.xx = np.mgrid[0:n, 0:n].astype(np.float64)
        self.owner = np.full((n, n), -1, dtype=np.int32)   # which snake (or marker's snake) holds a pixel
        self.snakes: list[_Snake] = []                       # the ones that are drawn
        turns = np.arange(cfg.headings) * (2 * np.pi / cfg.headings)
        turns = np.where(turns > np.pi, turns - 2 * np.pi, turns)
        self.turns = turns
        self.turn_weight = np.maximum(np.cos(np.minimum(np.abs(turns) * cfg.continuity, np.pi / 2)), 0.0) ** 2

    def window(self, p, radius: float) -> tuple[slice, slice]:
        n = self.cfg.size
        y0, x0 = (max(0, int(math.floor(v - radius))) for v in p)
        y1, x1 = (min(n, int(math.ceil(v + radius)) + 1) for v in p)
        return slice(y0, y1), slice(x0, x1)

    def seg_dist2(self, a, b, win):
        """Squared distances from the pixel centres in ``win`` to segments a -> b[k]: [K, h, w]."""
        yy, xx = self.yy[win], self.xx[win]
        ay, ax = a
        by, bx = b[:, 0, None, None], b[:, 1, None, None]
        dy, dx = by - ay, bx - ax
        t = ((yy - ay) * dy + (xx - ax) * dx) / np.maximum(dy * dy + dx * dx, 1e-12)
        t = np.clip(t, 0.0, 1.0)
        return (yy - (ay + t * dy)) ** 2 + (xx - (ax + t * dx)) ** 2

    def blocked(self, snake: int, own_old: np.ndarray, win) -> np.ndarray:
        """Pixels of ``win`` that touch another snake or an older part of this one."""
        n = self.cfg.size
        ys, xs = win
        grown = (slice(max(0, ys.start - 1), min(n, ys.stop + 1)), slice(max(0, xs.start - 1), min(n, xs.stop + 1)))
        owner = self.owner[grown]
        near = _dilate(((owner >= 0) & (owner != snake)) | own_old[grown])
        return near[ys.start - grown[0].start:ys.stop - grown[0].start, xs.start - grown[1].start:xs.stop - grown[1].start]

    def disk(self, centre) -> np.ndarray:
        cy, cx = np.round(centre)
        return np.hypot(self.yy - cy, self.xx - cx) <= self.cfg.marker_radius

    def free_fraction(self) -> float:
        return float((~_dilate(self.owner >= 0)).mean())


class _Snake:
    def __init__(self, canvas: _Canvas, sid: int, origin):
        self.c, self.sid = canvas, sid
        self.points = [np.asarray(origin, dtype=np.float64)]
        self.heading: float | None = None
        n = canvas.cfg.size
        self.dist = np.full((n, n), np.inf)        # distance to this snake's centre line
        self.old = np.zeros((n, n), dtype=bool)    # pixels of all paddles but the last
        self.last = np.zeros((n, n), dtype=bool)
        self.history: list[tuple] = []
        self.stuck = 0

    def extend(self) -> bool:
        """Add one paddle; False when no heading leaves it free."""
        c, cfg = self.c, self.c.cfg
        p = self.points[-1]
        if self.heading is None:
            angles, weights = c.turns.copy(), np.ones_like(c.turns)
        else:
            keep = c.turn_weight > 0
            angles, weights = self.heading + c.turns[keep], c.turn_weight[keep]
        ends = p[None, :] + cfg.step * np.stack([np.sin(angles), np.cos(angles)], axis=1)
        lo, hi = cfg.padding, cfg.size - 1 - cfg.padding
        inside = np.all((ends >= lo) & (ends <= hi), axis=1)
        if not inside.any():
            return False
        angles, weights, ends = angles[inside], weights[inside], ends[inside]
        win = c.window(p, cfg.step + cfg.line_width)
        d2 = c.seg_dist2(p, ends, win)
        support = d2 < cfg.line_width ** 2
        # the previous paddle touches the new one by design, so only older ones are avoided
        clash = (support & c.blocked(self.sid, self.old, win)[None]).any(axis=(1, 2))
        weights = np.where(clash, 0.0, weights)
        total = weights.sum()
        if total <= 0:
            return False
        k = min(int(np.searchsorted(np.cumsum(weights), c.rng.random() * total, side="right")), len(weights) - 1)
        new = np.zeros_like(self.last)
        new[win] = support[k]
        added = new & (c.owner < 0)
        self.history.append((self.heading, self.old.copy(), self.last, self.dist.copy(), added))
        self.points.append(ends[k])
        self.heading = float(angles[k])
        self.old |= self.last
        self.last = new
        self.dist[win] = np.minimum(self.dist[win], np.sqrt(d2[k]))
        c.owner[added] = self.sid
        return True

    def undo(self) -> None:
        """Take the last paddle away again."""
        self.heading, self.old, self.last, self.dist, added = self.history.pop()
        self.points.pop()
        self.c.owner[added] = -1

    @property
    def paddles(self) -> int:
        return len(self.points) - 1

    def erase(self) -> None:
        self.c.owner[self.c.owner == self.sid] = -1


def _free_seed(canvas: _Canvas, border: float) -> np.ndarray | None:
    n = canvas.cfg.size
    free = ~_dilate(canvas.owner >= 0)
    b = int(math.ceil(border))
    window = np.zeros_like(free)
    window[b:n - b, b:n - b] = True
    ys, xs = np.nonzero(free & window)
    if len(ys) == 0:
        return None
    i = canvas.rng.integers(len(ys))
    return np.array([ys[i], xs[i]], dtype=np.float64)


def _targets(canvas: _Canvas):
    """Two target snakes grown in turn; None when they cannot be completed."""
    cfg, rng = canvas.cfg, canvas.rng
    first = _free_seed(canvas, max(2 * cfg.seed_distance, cfg.padding))
    if first is None:
        return None
    angle = rng.integers(0, 360) * np.pi / 180
    second = np.round(first + cfg.seed_distance * np.array([np.sin(angle), np.cos(angle)]))
    lo, hi = cfg.padding, cfg.size - 1 - cfg.padding
    if not np.all((second >= lo) & (second <= hi)):
        return None
    snakes = [_Snake(canvas, 0, first), _Snake(canvas, 1, second)]
    for s in snakes:   # origin markers are reserved before anything grows near them
        disk = canvas.disk(s.points[0])
        if (disk & _dilate((canvas.owner >= 0) & (canvas.owner != s.sid))).any():
            return None
        canvas.owner[disk] = s.sid
    budget = cfg.backtracks
    while min(s.paddles for s in snakes) < cfg.contour_length:
        s = min(snakes, key=lambda t: t.paddles)   # in turn, as published
        if not s.extend():
            # a stuck snake steps back rather than the whole image starting again, further each
            # time, since one paddle back usually leads into the same dead end
            if budget == 0 or s.paddles == 0:
                return None
            budget -= 1
            s.stuck += 1
            for _ in range(min(s.stuck, s.paddles)):
                s.undo()
    for s in snakes:
        disk = canvas.disk(s.points[-1])
        if (disk & _dilate((canvas.owner >= 0) & (canvas.owner != s.sid))).any():
            return None
        canvas.owner[disk & (canvas.owner < 0)] = s.sid
    canvas.snakes.extend(snakes)
    return snakes


def _distractors(canvas: _Canvas) -> int:
    cfg, placed = canvas.cfg, 0
    for j in range(cfg.n_distractors):
        if canvas.free_fraction() < 0.01:
            break
        for _ in range(cfg.max_tries + 1):
            seed = _free_seed(canvas, cfg.padding)
            if seed is None:
                return placed
            snake = _Snake(canvas, 2 + j, seed)
            if all(snake.extend() for _ in range(cfg.n_distractor_paddles)):
                canvas.snakes.append(snake)
                placed += 1
                break
            snake.erase()
    return placed


def _render(canvas: _Canvas, markers) -> np.ndarray:
    cfg = canvas.cfg
    dist = np.min([s.dist for s in canvas.snakes], axis=0)
    line = np.clip(1.0 - dist / cfg.line_width, 0.0, 1.0)
    drawn = dist < cfg.line_width
    img = np.where(drawn, cfg.paddle_contrast * (cfg.floor + (1 - cfg.floor) * line), 0.0)
    for m in markers:
        img = np.where(canvas.disk(m), 1.0, img)
    return np.clip(np.round(img * 255), 0, 255).astype(np.uint8)


def generate_one(cfg: PathfinderConfig, rng: np.random.Generator, label: int, max_images: int = 100):
    """``(image uint8 [size, size], markers int [2, 2] (row, col), distractors placed)``."""
    for _ in range(max_images):
        canvas = _Canvas(cfg, rng)
        snakes = _targets(canvas)
        if snakes is None:
            continue
        placed = _distractors(canvas)
        o = int(rng.integers(2))
        far = snakes[o] if label == 1 else snakes[1 - o]
        markers = [np.round(snakes[o].points[0]), np.round(far.points[-1])]
        return _render(canvas, markers), np.array(markers, dtype=np.int64), placed
    raise RuntimeError(f"no Pathfinder image after {max_images} attempts with {cfg}; the snakes do not fit")


def _generate_range(cfg: PathfinderConfig, seed: int, stream: int, start: int, stop: int):
    n = stop - start
    images = np.zeros((n, cfg.size, cfg.size), dtype=np.uint8)
    markers = np.zeros((n, 2, 2), dtype=np.int64)
    labels = np.zeros(n, dtype=np.int64)
    placed = np.zeros(n, dtype=np.int64)
    for j, i in enumerate(range(start, stop)):
        flip = int(np.random.default_rng([seed, stream, i // 2, 1]).integers(2))
        labels[j] = (i + flip) % 2
        rng = np.random.default_rng([seed, stream, i])
        images[j], markers[j], placed[j] = generate_one(cfg, rng, int(labels[j]))
    return images, labels, markers, placed


def generate(n: int, seed: int = 0, cfg: PathfinderConfig | None = None, stream: int = 0, workers: int = 1) -> dict:
    """``n`` images: ``images`` uint8 [n, size, size], ``labels`` int64 [n], ``markers`` [n, 2, 2]
    (row, col of each marker's centre) and ``distractors`` (how many were placed).

    Image i depends only on ``(seed, stream, i)``, so a longer run starts with a shorter one and
    ``workers`` processes give the same images as one; images 2j and 2j+1 take opposite labels
    in a random order, so labels are balanced."""
    cfg = cfg or PathfinderConfig()
    if workers > 1 and n > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        bounds = np.unique(np.linspace(0, n, 4 * workers + 1).astype(int))
        # fork: the workers need only NumPy and this module, already loaded here
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            jobs = [(cfg, seed, stream, a, b) for a, b in zip(bounds[:-1], bounds[1:])]
            parts = list(pool.map(_generate_range, *zip(*jobs)))
    else:
        parts = [_generate_range(cfg, seed, stream, 0, n)]
    images, labels, markers, placed = (np.concatenate(x) for x in zip(*parts))
    return {"images": torch.from_numpy(images), "labels": torch.from_numpy(labels),
            "markers": torch.from_numpy(markers), "distractors": torch.from_numpy(placed)}


def statistics_of(out: dict) -> dict:
    """Label balance, ink and distractor counts of generated images, for a chapter to state."""
    images, labels = out["images"], out["labels"]
    return {"n": len(labels), "positive_fraction": float(labels.float().mean()) if len(labels) else 0.0,
            "drawn_pixel_fraction": float((images > 0).float().mean()) if len(labels) else 0.0,
            "distractors_mean": float(out["distractors"].float().mean()) if len(labels) else 0.0,
            "distractors_min": int(out["distractors"].min()) if len(labels) else 0}


def _flood(on: np.ndarray, start, seen: np.ndarray) -> list[tuple[int, int]]:
    """The pixels of ``on`` 8-connected to ``start``, marked in ``seen`` on the way."""
    h, w = on.shape
    seen[start] = True
    todo, found = deque([start]), []
    while todo:
        y, x = todo.popleft()
        found.append((y, x))
        for v in range(max(0, y - 1), min(h, y + 2)):
            for u in range(max(0, x - 1), min(w, x + 2)):
                if on[v, u] and not seen[v, u]:
                    seen[v, u] = True
                    todo.append((v, u))
    return found


def connected(image, a, b, threshold: int = 0) -> bool:
    """Whether pixels a and b, both above ``threshold``, are joined through 8-neighbouring pixels
    above ``threshold`` (flood fill from a)."""
    on = np.asarray(image) > threshold
    a, b = tuple(int(v) for v in a), tuple(int(v) for v in b)
    if not (on[a] and on[b]):
        return False
    seen = np.zeros_like(on)
    _flood(on, a, seen)
    return bool(seen[b])


def find_markers(image, level: int = 255) -> list[tuple[int, int]]:
    """Centres (rounded) of the 8-connected blobs of pixels at ``level`` or above, largest first
    (markers are drawn at 255, contours at most at ``paddle_contrast`` of that)."""
    on = np.asarray(image) >= level
    seen = np.zeros_like(on)
    blobs = []
    for start in zip(*np.nonzero(on)):
        if not seen[start]:
            ys, xs = zip(*_flood(on, start, seen))
            blobs.append((len(ys), (int(round(np.mean(ys))), int(round(np.mean(xs))))))
    return [c for _, c in sorted(blobs, key=lambda t: -t[0])]


def path_label(image, markers=None, threshold: int = 0) -> int:
    """1 if the two markers (given, or the two largest full-brightness blobs) are joined by drawn
    pixels, else 0."""
    if markers is None:
        found = find_markers(image)
        if len(found) < 2:
            return int(len(found) == 1)   # touching markers merge into one blob
        markers = found[:2]
    return int(connected(image, markers[0], markers[1], threshold))


def describe(cfg: PathfinderConfig) -> dict:
    d = asdict(cfg)
    d.update(step=cfg.step, distractor_length=cfg.n_distractor_paddles, num_distractors=cfg.n_distractors)
    return d
