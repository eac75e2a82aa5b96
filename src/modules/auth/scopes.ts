/** The six scopes SPEC names, and which operations need them (DECISIONS: Authentication). */
export const ALL_SCOPES = [
  'sites:read',
  'sites:write',
  'site-visits:read',
  'site-visits:write',
  'webhooks:read',
  'webhooks:write',
] as const;

export type Scope = (typeof ALL_SCOPES)[number];

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'sites:read': 'Read sites.',
  'sites:write': 'Create and update sites.',
  'site-visits:read':
    'Read site visits (including assetsToService and siteVisitAssets), return labels, messages, attachments, projects and items.',
  'site-visits:write':
    'Create and update site visits (including siteAssetIds), messages, and upload return labels and attachments.',
  'webhooks:read': 'List webhook subscriptions.',
  'webhooks:write': 'Create and update webhook subscriptions.',
};

export function isScope(value: string): value is Scope {
  return (ALL_SCOPES as readonly string[]).includes(value);
}
