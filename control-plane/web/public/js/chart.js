// @ts-check
// The Usage page's bar charts: inline SVG with presentation attributes and
// classes only (nothing the CSP would block), and axes on round numbers.

const SVG = 'http://www.w3.org/2000/svg';

/**
 * @param {string} tag
 * @param {Record<string, string | number>} [attrs]
 * @param {...(Node | null | undefined)} children
 * @returns {SVGElement}
 */
function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) if (c) el.append(c);
  return el;
}

/**
 * Round axis ticks from 0 past `max`: a step of 1, 2 or 5 times a power of ten
 * giving about `target` intervals, so an axis reads $0.00, $0.02, $0.04 … and
 * not max and half-max ($0.065812 / $0.032906). `integer` keeps the step ≥ 1
 * (request counts).
 * @param {number} max
 * @param {{ target?: number, integer?: boolean }} [options]
 * @returns {{ ticks: number[], step: number }}
 */
export function niceTicks(max, { target = 4, integer = false } = {}) {
  const top = max > 0 && Number.isFinite(max) ? max : integer ? 1 : 0.01;
  const raw = top / target;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw * (1 - 1e-9)) ?? 10 * magnitude;
  if (integer) step = Math.max(1, Math.round(step));
  const count = Math.max(1, Math.ceil(top / step - 1e-9));
  // toPrecision drops the float noise of i * step (0.30000000000000004).
  const ticks = Array.from({ length: count + 1 }, (_, i) => Number((i * step).toPrecision(12)));
  return { ticks, step };
}

/**
 * A money tick label: cents, or as many decimals as the step needs when the
 * step is under a cent ($0.000, $0.005, $0.010).
 * @param {number} step
 * @returns {(value: number) => string}
 */
export function moneyTickFormat(step) {
  const decimals = step >= 0.01 ? 2 : Math.min(6, Math.ceil(-Math.log10(step) - 1e-9));
  return (value) =>
    value.toLocaleString('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/**
 * @typedef {{ id?: string, name: string, cls: string, values: Map<string, number> }} Series
 * @typedef {{
 *   title: string,
 *   buckets: string[],
 *   label: (bucket: string) => string,
 *   series: Series[],
 *   tick: (step: number) => (value: number) => string,
 *   exact: (value: number) => string,
 *   integer?: boolean,
 *   width?: number,
 *   height?: number,
 * }} BarsOptions
 */

/**
 * One column per bucket, stacked by series. Each bar's tooltip gives the
 * exact figure (`exact`); the axis uses round ticks (`tick`).
 * @param {BarsOptions} options
 * @returns {SVGElement}
 */
export function stackedBars({ title, buckets, label, series, tick, exact, integer = false, width = 720, height = 220 }) {
  const pad = { left: 64, right: 8, top: 10, bottom: 26 };
  const totals = buckets.map((b) => series.reduce((n, s) => n + (s.values.get(b) ?? 0), 0));
  const { ticks, step: tickStep } = niceTicks(Math.max(...totals, 0), { integer });
  const max = ticks[ticks.length - 1];
  const format = tick(tickStep);
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const step = plotW / Math.max(1, buckets.length);
  const barW = Math.max(1, step * 0.75);
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', 'aria-label': title, preserveAspectRatio: 'none' });
  chart.append(svg('title', {}, document.createTextNode(title)));
  for (const value of ticks) {
    const y = pad.top + plotH * (1 - value / max);
    chart.append(svg('line', { x1: pad.left, x2: width - pad.right, y1: y, y2: y, class: 'axis' }));
    chart.append(svg('text', { x: pad.left - 6, y: y + 4, 'text-anchor': 'end', class: 'tick' }, document.createTextNode(format(value))));
  }
  buckets.forEach((b, i) => {
    let y = pad.top + plotH;
    const x = pad.left + i * step + (step - barW) / 2;
    for (const s of series) {
      const v = s.values.get(b) ?? 0;
      if (!v) continue;
      const hgt = (v / max) * plotH;
      y -= hgt;
      const rect = svg('rect', { x, y, width: barW, height: Math.max(0.5, hgt), class: s.cls, 'data-bucket': b });
      rect.append(svg('title', {}, document.createTextNode(`${label(b)} · ${s.name}: ${exact(v)}`)));
      chart.append(rect);
    }
  });
  const every = Math.max(1, Math.ceil(buckets.length / Math.max(2, Math.floor(plotW / 90))));
  buckets.forEach((b, i) => {
    if (i % every) return;
    chart.append(svg('text', { x: pad.left + i * step + step / 2, y: height - 8, 'text-anchor': 'middle' }, document.createTextNode(label(b))));
  });
  return chart;
}
