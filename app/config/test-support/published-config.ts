/**
 * A model's published config.json, written into the project as data (test fixtures only). Each
 * keeps the fields that matter for layer types and KV geometry (spec §2.4 "config keys") and drops
 * the rest (rope tables, token ids, quantization blocks).
 */
export interface PublishedConfig {
  /** the Hugging Face repository */
  readonly id: string;
  /**
   * `published`: values as in the repository's config.json (recalled or cross-checked with public
   * copies; spec §2.5 lists these models). `reconstructed`: spec §2.5 had no verified config.json
   * for this family; the fields follow the model card and public copies and may differ in detail.
   */
  readonly provenance: 'published' | 'reconstructed';
  readonly note?: string;
  readonly config: Readonly<Record<string, unknown>>;
}
