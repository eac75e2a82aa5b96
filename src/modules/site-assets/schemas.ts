/** Site assets: equipment at a site, provisioned by the operator and assigned to visits by integer id. */
import { type Static, Type } from 'typebox';
import { Text } from '../../http/schemas.js';

export const SiteAssetCreateBody = Type.Object(
  {
    siteCode: Text(100, { description: "The siteCode of one of the tenant's sites." }),
    uniqueId: Text(100),
    friendlyLocation: Text(200),
    assetStatus: Text(100),
    assetDisplay: Text(200),
  },
  { additionalProperties: false },
);
export type SiteAssetCreate = Static<typeof SiteAssetCreateBody>;

export const SiteAsset = Type.Object(
  {
    siteAssetId: Type.Integer(),
    siteCode: Type.String(),
    uniqueId: Type.String(),
    friendlyLocation: Type.String(),
    assetStatus: Type.String(),
    assetDisplay: Type.String(),
  },
  { additionalProperties: false },
);
export type SiteAssetValue = Static<typeof SiteAsset>;
