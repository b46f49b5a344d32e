export { AutoAssigner, type AutoAssignerDeps } from './auto-assign.js';
