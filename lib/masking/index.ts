export { maskForStore, maskText, maskValue } from './mask';
export { isSecretName, MASKED, parseMaskFields } from './rules';
export { CIRCULAR, CUT_TOO_DEEP, MAX_DEPTH } from './structure';
