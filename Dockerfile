FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY control-plane ./control-plane
COPY proxy ./proxy
COPY shared ./shared
RUN npm run build

FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY control-plane ./control-plane
COPY proxy ./proxy
COPY shared ./shared
# Compiled after the sources above, so `npm start` and friends find it up to date.
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
COPY models.example.json ./
# The embedded store (used when DATABASE_URL is unset) needs a directory the
# non-root user can write; mount a volume here to keep it across restarts.
RUN mkdir -p /app/data && chown node:node /app/data
ENV NODE_ENV=production \
    DATA_DIR=/app/data
VOLUME ["/app/data"]
USER node
EXPOSE 8080 8081
# node itself is PID 1 and runs the compiled code, so SIGTERM reaches the
# process that drains (an npm wrapper in between would have to relay it). The
# compose file and the Kubernetes manifests pick the half:
# dist/bin/control-plane.js or dist/bin/proxy.js.
CMD ["node", "dist/bin/start.js"]
