/** A visit's return label as a versioned file (SPEC: Return label; Uploads rule 2: PDF only). */
import type { FileOwner } from '../files/service.js';
import { RETURN_LABEL_OWNER } from './representation.js';
import { touchVisit, visitExists } from './repository.js';

export const returnLabelOwner: FileOwner = {
  ownerType: RETURN_LABEL_OWNER,
  ownerName: 'Site visit',
  fileName: 'Return label',
  rules: { accepted: [{ mime: 'application/pdf' }], defaultBaseName: 'return-label' },
  exists: visitExists,
  // A new label changes the visit's returnLabel attribute: version + 1 and updatedAt, like any change.
  touch: touchVisit,
};
