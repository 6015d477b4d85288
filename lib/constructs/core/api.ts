/**
 * The one import point for the Kubernetes API version. Every construct imports cdk8s-plus and
 * the generated L1 classes from here, so moving to a newer cdk8s-plus-XX is a one-line change.
 */
export * as kplus from 'cdk8s-plus-28';
export { k8s } from 'cdk8s-plus-28';
