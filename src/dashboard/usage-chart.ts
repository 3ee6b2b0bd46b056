// Inline SVG bar chart built with createElementNS. The drawing scales to the
// box (preserveAspectRatio none, fixed CSS height, so nothing shifts when data
// arrives); axis labels are HTML beside it so text never stretches.
import { layoutColumns } from './chart-layout.ts';
import { el, svg } from './dom.ts';
import { formatCompact, formatCount } from './format.ts';
import { formatCost, formatCostAxis } from './money.ts';

interface ChartSeries {
  name: string;
  /** A class from app.css that sets the fill. */
  className: string;
}

interface ChartSpec {
  title: string;
  /** Noun for the values, plural: "requests", "tokens". */
  unit: string;
  series: ChartSeries[];
  columns: Array<{ label: string; values: number[] }>;
  testId: string;
  /** Set for a chart of money: the values are integer nanos of this currency, and read as amounts. */
  currency?: string;
}

let chartCount = 0;

export function buildBarChart(spec: ChartSpec): HTMLElement {
  chartCount += 1;
  const descId = `chart-desc-${chartCount}`;
  const layout = layoutColumns(spec.columns.map((c) => c.values));
  const first = spec.columns[0]?.label ?? '';
  const last = spec.columns.at(-1)?.label ?? '';
  const total = layout.columns.reduce((sum, c) => sum + c.total, 0);
  const peakColumn = layout.columns.find((c) => c.total === layout.peak && c.total > 0);
  const money = spec.currency;
  // A bar's own value (its title names the series), a quantity in the description, an axis label.
  const value = (n: number): string => (money === undefined ? formatCount(n) : formatCost(n, money));
  const quantity = (n: number): string => (money === undefined ? `${formatCount(n)} ${spec.unit}` : formatCost(n, money));
  // A chart of money with nothing in it has no scale worth a label (not "0.000000001").
  const axis = (n: number): string => (money === undefined ? formatCompact(n) : layout.peak === 0 ? '' : formatCostAxis(n));
  const description =
    total === 0
      ? `No ${spec.unit} from ${first} to ${last}.`
      : `${quantity(total)} from ${first} to ${last}; the busiest period, ${spec.columns[peakColumn?.index ?? 0]?.label ?? ''}, had ${money === undefined ? formatCount(layout.peak) : quantity(layout.peak)}.`;

  const drawing = svg(
    'svg',
    {
      class: 'chart-svg',
      viewBox: `0 0 ${layout.width} ${layout.height}`,
      preserveAspectRatio: 'none',
      role: 'img',
      'aria-label': spec.title,
      'aria-describedby': descId,
      focusable: 'false',
    },
    [
      svg('title', {}, [spec.title]),
      svg('desc', {}, [description]),
      gridLine(layout.width, 0),
      gridLine(layout.width, layout.height / 2),
      ...layout.columns.flatMap((column) =>
        column.segments.map((segment) => {
          const series = spec.series[segment.series];
          return svg('rect', { class: series?.className ?? '', x: column.x, y: segment.y, width: column.width, height: segment.height }, [
            svg('title', {}, [`${spec.columns[column.index]?.label ?? ''}: ${value(segment.value)} ${series?.name.toLowerCase() ?? ''}`]),
          ]);
        }),
      ),
      gridLine(layout.width, layout.height),
    ],
  );

  return el('figure', { className: 'chart', testId: spec.testId }, [
    el('figcaption', { className: 'chart-head' }, [
      el('span', { className: 'chart-title', text: spec.title }),
      el(
        'span',
        { className: 'legend' },
        spec.series.map((s) => el('span', { className: 'legend-item' }, [el('span', { className: `swatch ${s.className}`, attrs: { 'aria-hidden': 'true' } }), s.name])),
      ),
    ]),
    el('div', { className: 'chart-frame' }, [
      el('div', { className: 'y-axis', attrs: { 'aria-hidden': 'true' } }, [
        el('span', { text: axis(layout.scaleMax) }),
        // Counts (and nanos) are whole: a scale of 1 has no labelled middle (never "0.5 requests").
        el('span', { text: Number.isInteger(layout.scaleMax / 2) ? axis(layout.scaleMax / 2) : '' }),
        el('span', { text: '0' }),
      ]),
      drawing,
    ]),
    el('div', { className: 'x-axis', attrs: { 'aria-hidden': 'true' } }, [el('span', { text: first }), el('span', { text: last })]),
    el('p', { className: 'visually-hidden', text: description, attrs: { id: descId } }),
  ]);
}

function gridLine(width: number, y: number): SVGLineElement {
  return svg('line', { class: 'grid', x1: 0, x2: width, y1: y, y2: y, 'vector-effect': 'non-scaling-stroke' });
}
