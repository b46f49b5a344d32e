export { ResourceService, resourceView, type ResourceView } from './service.js';
