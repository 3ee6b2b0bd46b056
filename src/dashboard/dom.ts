// Element builders. Text only ever goes in through textContent (key names are
// user input), and no style attribute is ever written: the page is served
// with `style-src 'self'`, so looks come from classes in app.css.
import { formatFullDateTime } from './format.ts';

export type Child = Node | string | null | undefined | false;

interface ElementOptions {
  className?: string;
  text?: string;
  testId?: string;
  attrs?: Record<string, string>;
}

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, options: ElementOptions = {}, children: Child[] = []): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (options.className !== undefined) node.className = options.className;
  if (options.testId !== undefined) node.dataset['testid'] = options.testId;
  for (const [name, value] of Object.entries(options.attrs ?? {})) node.setAttribute(name, value);
  if (options.text !== undefined) node.textContent = options.text;
  append(node, children);
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}, children: Child[] = []): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  append(node, children);
  return node;
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/** The element with this id from index.html; a missing one is a page bug, reported at boot. */
export function byId<T extends HTMLElement>(id: string, type: { new (): T; prototype: T }): T {
  const node = document.getElementById(id);
  if (!(node instanceof type)) throw new Error(`index.html has no <${type.name}> with id "${id}"`);
  return node;
}

export function clear(node: Element): void {
  node.replaceChildren();
}

/** A `<time>` element: machine-readable instant, human-readable text. */
export function timeElement(iso: string, text: string): HTMLTimeElement {
  return el('time', { text, attrs: { datetime: iso } });
}

/** A table cell's `<time>`: short text, the whole instant in its title (hover, long press, screen readers via datetime). */
export function whenElement(iso: string, text: string): HTMLTimeElement {
  // A narrow column breaks after the date, never inside the time and its zone.
  const space = text.indexOf(' ');
  const time = space < 0 ? timeElement(iso, text) : el('time', { attrs: { datetime: iso } }, [el('span', { className: 'nowrap', text: text.slice(0, space) }), ' ', el('span', { className: 'nowrap', text: text.slice(space + 1) })]);
  time.title = formatFullDateTime(iso);
  time.className = 'when';
  return time;
}
