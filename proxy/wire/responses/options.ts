/** What the provider at the end of the chain can honour, as the caller knows it from the models file. */
export interface TargetAbilities {
  /** The model entry says `reasoning: true`: reasoning effort is mapped, not dropped. */
  reasoning: boolean;
  /** The provider runs searches itself (a Messages provider's server web search tool): `web_search` is mapped, not dropped. */
  webSearch: boolean;
}

/** A request in the other format, and every well-formed field, tool or part it could not carry. */
export interface Mapped {
  request: Record<string, unknown>;
  /** Names for the `x-tollgate-dropped` header, each once, in the order met. */
  dropped: string[];
}

/** Collects dropped names once each, in order. */
export class DropList {
  private readonly names = new Set<string>();
  add(name: string): void {
    this.names.add(name);
  }
  list(): string[] {
    return [...this.names];
  }
}
