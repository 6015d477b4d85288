/**
 * Jest setupFilesAfterEnv for the `e2e` project: a test that fails is run once more, and the first
 * failure is printed in full before the retry ("RETRY 1"), so it stays in the log and can be read.
 *
 * Why only here: these tests judge real kubelets, API servers and manager pods on two shared cores,
 * where a scheduling stall of a few seconds can move a figure across a behaviour's edge once in
 * dozens of runs (the drills' leader and readiness assertions). A defect fails both tries; the
 * unit, integration and package tiers get no retry.
 */
import { jest } from '@jest/globals';

jest.retryTimes(1, { logErrorsBeforeRetry: true });
