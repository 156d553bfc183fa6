export * from './mode';
export { DRILL_TOKEN, DRILL_WARNING, type DrillAnswer, runFireDrill } from './run';
